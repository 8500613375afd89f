import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { agentFileWork } from './file-work-limit.js';
import { describeValue } from '@sluice/protocol';
import { RPC_ERROR, RpcError } from './json-rpc-channel.js';

/** Largest file an agent may read through the daemon. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;
/** Largest content an agent may write through the daemon. */
export const MAX_WRITE_BYTES = 16 * 1024 * 1024;

// O_NONBLOCK: opening a FIFO (or a device) returns at once instead of holding a libuv thread
// until a writer comes; O_NOFOLLOW: the resolved path was swapped for a symlink meanwhile.
const { O_RDONLY, O_WRONLY, O_CREAT, O_NONBLOCK, O_NOFOLLOW } = constants;

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
        throw new RpcError(RPC_ERROR.invalidParams, `path ${describeValue(target)} is a dangling symlink`);
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
    throw new RpcError(RPC_ERROR.invalidParams, `path must be an absolute path, got ${describeValue(path)}`);
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

/** `fs/read_text_file` inside `root`: `line` (1-based) and `limit` select lines. Regular files only. */
export function readTextFile(root: string, params: Record<string, unknown>): Promise<{ content: string }> {
  const line = optionalPositive('line', params['line']);
  const limit = optionalPositive('limit', params['limit']);
  return agentFileWork.run('fs/read_text_file', async () => {
    const path = await containedPath(root, params['path']);
    try {
      const text = await withRegularFile(path, O_RDONLY, readBounded);
      if (line === undefined && limit === undefined) return { content: text };
      const lines = text.split('\n');
      const from = (line ?? 1) - 1;
      return { content: lines.slice(from, limit === undefined ? undefined : from + limit).join('\n') };
    } catch (error) {
      throw asRpcError(error);
    }
  });
}

/** `fs/write_text_file` inside `root` (missing parent directories are created). Regular files only. */
export function writeTextFile(root: string, params: Record<string, unknown>): Promise<null> {
  const content = params['content'];
  if (typeof content !== 'string') throw new RpcError(RPC_ERROR.invalidParams, 'content must be a string');
  const bytes = Buffer.from(content, 'utf8');
  if (bytes.length > MAX_WRITE_BYTES)
    throw new RpcError(RPC_ERROR.invalidParams, `content is larger than ${MAX_WRITE_BYTES} bytes`);
  return agentFileWork.run('fs/write_text_file', async () => {
    const path = await containedPath(root, params['path']);
    try {
      await mkdir(dirname(path), { recursive: true });
      await withRegularFile(path, O_WRONLY | O_CREAT, async (handle) => {
        // Truncated only once known to be a regular file.
        await handle.truncate(0);
        await handle.write(bytes, 0, bytes.length, 0);
      });
      return null;
    } catch (error) {
      throw asRpcError(error);
    }
  });
}

/**
 * Opens `path` without blocking and without following a symlink, checks on the descriptor
 * itself that it is a regular file (not a FIFO, socket or device), then runs `use` on it.
 */
async function withRegularFile<T>(
  path: string,
  flags: number,
  use: (handle: FileHandle, stats: Stats) => Promise<T>,
): Promise<T> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | O_NONBLOCK | O_NOFOLLOW, 0o666);
  } catch (error) {
    // ENXIO: a FIFO without a reader opened for writing; ELOOP: a symlink in its place.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENXIO' || code === 'ELOOP') throw notRegular(path);
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(path);
    return await use(handle, stats);
  } finally {
    await handle.close();
  }
}

function notRegular(path: string): RpcError {
  return new RpcError(
    RPC_ERROR.invalidParams,
    `path ${JSON.stringify(path)} is not a regular file (FIFOs, sockets, devices and symlinks swapped in are refused)`,
  );
}

/** The file's text, refused past {@link MAX_READ_BYTES} (read to the end, however it grows). */
async function readBounded(handle: FileHandle, stats: Stats): Promise<string> {
  if (stats.size > MAX_READ_BYTES) throw tooLarge();
  let buffer = Buffer.alloc(stats.size + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      // It grew since the stat: room for more, up to the bound.
      if (length > MAX_READ_BYTES) throw tooLarge();
      const bigger = Buffer.alloc(Math.min(length * 2, MAX_READ_BYTES + 1));
      buffer.copy(bigger, 0, 0, length);
      buffer = bigger;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return buffer.toString('utf8', 0, length);
}

function tooLarge(): RpcError {
  return new RpcError(RPC_ERROR.invalidParams, `file is larger than ${MAX_READ_BYTES} bytes`);
}

function asRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new RpcError(-32002, 'Resource not found: no such file');
  return new RpcError(RPC_ERROR.internalError, `file operation failed (${code ?? 'error'})`);
}
