import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { descendants, processTable } from './process-tree.js';

/** Where the cgroup (v2, then v1) memory limits of this process are read from. */
const CGROUP_LIMIT_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];

/**
 * The memory this daemon may use, in bytes: its cgroup's limit (v2 `memory.max`, then v1),
 * or the machine's memory when there is none (`max`) or it is above the machine's.
 */
export function effectiveMemoryLimitBytes(files: readonly string[] = CGROUP_LIMIT_FILES): number {
  const host = totalmem();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      continue;
    }
    const limit = Number(text);
    if (Number.isSafeInteger(limit) && limit > 0 && limit < host) return limit;
  }
  return host;
}

function rssBytesOf(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

/**
 * The resident memory of each root's whole process tree (the root and every descendant, found
 * by parent pid in the process table of `process-tree.ts`), summed from `VmRSS` of `/proc/<pid>/status`, in bytes. One
 * pass over `/proc` serves every root. Where `/proc` is missing (not Linux) every tree is 0.
 */
export function processTreeRss(roots: readonly number[]): Map<number, number> {
  const sizes = new Map<number, number>();
  if (roots.length === 0) return sizes;
  const table = processTable() ?? [];
  for (const root of roots) {
    let bytes = 0;
    for (const pid of descendants(table, root)) bytes += rssBytesOf(pid);
    sizes.set(root, bytes);
  }
  return sizes;
}
