import { lstat, mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { RPC_ERROR, RpcError } from './json-rpc-channel.js';

/** Largest file an agent may read through the daemon. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/**
 * The path `target` really names once symlinks are resolved: its realpath when it exists,
 * else its nearest existing parent's realpath joined with the rest.
 */
async function realTarget(target: string): Promise<string> {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      return join(await realpath(current), ...missing.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // A dangling symlink: where a write would land is not known here, so refuse it.
      if (
        await lstat(current).then(
          () => true,
          () => false,
        )
      )
        throw new RpcError(RPC_ERROR.invalidParams, `path ${JSON.stringify(target)} is a dangling symlink`);
      const parent = dirname(current);
      if (parent === current) throw error;
      missing.push(current.slice(parent.length).replace(/^[\\/]+/, ''));
      current = parent;
    }
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The resolved path of `path` if it lies in the workspace `root` after following symlinks;
 * otherwise a JSON-RPC error and nothing is touched.
 */
export async function containedPath(root: string, path: unknown): Promise<string> {
  if (typeof path !== 'string' || !isAbsolute(path))
    throw new RpcError(RPC_ERROR.invalidParams, `path must be an absolute path, got ${JSON.stringify(path)}`);
  const realRoot = await realpath(root);
  const target = await realTarget(resolve(path));
  if (!inside(realRoot, target))
    throw new RpcError(
      RPC_ERROR.invalidParams,
      `path ${JSON.stringify(path)} is outside the session's workspace`,
    );
  return target;
}

function optionalPositive(name: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new RpcError(
      RPC_ERROR.invalidParams,
      `${name} must be a positive integer, got ${JSON.stringify(value)}`,
    );
  return value;
}

/** `fs/read_text_file` inside `root`: `line` (1-based) and `limit` select lines. */
export async function readTextFile(
  root: string,
  params: Record<string, unknown>,
): Promise<{ content: string }> {
  const line = optionalPositive('line', params['line']);
  const limit = optionalPositive('limit', params['limit']);
  const path = await containedPath(root, params['path']);
  try {
    if ((await stat(path)).size > MAX_READ_BYTES)
      throw new RpcError(RPC_ERROR.invalidParams, `file is larger than ${MAX_READ_BYTES} bytes`);
    const text = await readFile(path, 'utf8');
    if (line === undefined && limit === undefined) return { content: text };
    const lines = text.split('\n');
    const from = (line ?? 1) - 1;
    return { content: lines.slice(from, limit === undefined ? undefined : from + limit).join('\n') };
  } catch (error) {
    throw asRpcError(error);
  }
}

/** `fs/write_text_file` inside `root` (missing parent directories are created). */
export async function writeTextFile(root: string, params: Record<string, unknown>): Promise<null> {
  const content = params['content'];
  if (typeof content !== 'string') throw new RpcError(RPC_ERROR.invalidParams, 'content must be a string');
  const path = await containedPath(root, params['path']);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content, 'utf8');
    return null;
  } catch (error) {
    throw asRpcError(error);
  }
}

function asRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new RpcError(-32002, 'Resource not found: no such file');
  return new RpcError(RPC_ERROR.internalError, `file operation failed (${code ?? 'error'})`);
}
