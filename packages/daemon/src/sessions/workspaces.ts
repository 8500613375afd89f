import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { InvalidCwdError, WorkspaceMismatchError } from './errors.js';

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** A session's working directory and the served workspace it belongs to. */
export interface ResolvedCwd {
  cwd: string;
  workspaceCwd: string;
}

/**
 * The path with every symlink resolved: of the path itself when it exists, else of its nearest
 * existing ancestor with the rest appended (a cwd may name a directory not created yet).
 */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPath(parent), basename(path));
  }
}

/** The served workspace roots: where a session's cwd may lie (all of them when unset). */
export class WorkspaceRoots {
  /** Each root with its symlinks resolved, for containment checks. */
  private readonly realRoots: readonly string[] | undefined;

  constructor(readonly roots: readonly string[] | undefined) {
    this.realRoots = roots?.map(realPath);
  }

  /**
   * The cwd, normalized, and the innermost served root holding it (`undefined` → the first
   * root). Throws `InvalidCwdError` for a relative path, `WorkspaceMismatchError` outside.
   */
  resolve(cwd: unknown): ResolvedCwd {
    const roots = this.roots;
    if (cwd === undefined && roots !== undefined && roots[0] !== undefined)
      return { cwd: roots[0], workspaceCwd: roots[0] };
    if (typeof cwd !== 'string' || !isAbsolute(cwd)) throw new InvalidCwdError(cwd);
    const normalized = resolve(cwd);
    if (roots === undefined) return { cwd: normalized, workspaceCwd: normalized };
    // Containment is decided on real paths: `<root>/link → /etc` is outside the root.
    const real = realPath(normalized);
    let best = -1;
    roots.forEach((root, i) => {
      const realRoot = this.realRoots![i]!;
      if (isInside(real, realRoot) && (best < 0 || root.length > roots[best]!.length)) best = i;
    });
    if (best < 0) throw new WorkspaceMismatchError(normalized, roots);
    return { cwd: normalized, workspaceCwd: roots[best]! };
  }

  /** Whether a stored session's workspace is served here. */
  serves(workspaceCwd: string): boolean {
    const roots = this.roots;
    return roots === undefined || roots.some((root) => isInside(workspaceCwd, root));
  }
}
