import { isAbsolute, resolve, sep } from 'node:path';
import { InvalidCwdError, WorkspaceMismatchError } from './errors.js';

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** A session's working directory and the served workspace it belongs to. */
export interface ResolvedCwd {
  cwd: string;
  workspaceCwd: string;
}

/** The served workspace roots: where a session's cwd may lie (all of them when unset). */
export class WorkspaceRoots {
  constructor(readonly roots: readonly string[] | undefined) {}

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
    let best: string | undefined;
    for (const root of roots)
      if (isInside(normalized, root) && (best === undefined || root.length > best.length)) best = root;
    if (best === undefined) throw new WorkspaceMismatchError(normalized, roots);
    return { cwd: normalized, workspaceCwd: best };
  }

  /** Throws `WorkspaceMismatchError` unless a stored session's workspace is served here. */
  assertServed(workspaceCwd: string): void {
    const roots = this.roots;
    if (roots !== undefined && !roots.some((root) => isInside(workspaceCwd, root)))
      throw new WorkspaceMismatchError(workspaceCwd, roots);
  }
}
