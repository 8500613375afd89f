import { readdirSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

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

/** `ppid` of each process, from `/proc/<pid>/stat` (the field after the parenthesised name). */
function parentsOf(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isSafeInteger(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ', 2)[1]);
    const list = children.get(ppid);
    if (list === undefined) children.set(ppid, [pid]);
    else list.push(pid);
  }
  return children;
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
 * by `ppid` in `/proc/<pid>/stat`), summed from `VmRSS` of `/proc/<pid>/status`, in bytes. One
 * pass over `/proc` serves every root. Where `/proc` is missing (not Linux) every tree is 0.
 */
export function processTreeRss(roots: readonly number[]): Map<number, number> {
  const sizes = new Map<number, number>();
  if (roots.length === 0) return sizes;
  const children = parentsOf();
  for (const root of roots) {
    let bytes = 0;
    const stack = [root];
    const seen = new Set<number>();
    while (stack.length > 0) {
      const pid = stack.pop()!;
      if (seen.has(pid)) continue;
      seen.add(pid);
      bytes += rssBytesOf(pid);
      for (const child of children.get(pid) ?? []) stack.push(child);
    }
    sizes.set(root, bytes);
  }
  return sizes;
}
