// A process and all its descendants as Linux's /proc shows them: memory (RSS, PSS) and CPU time
// of the whole tree. A daemon that runs its agents as child processes is measured together
// with them, so a daemon that keeps its agents out of its own process is billed for them too.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Clock ticks per second of the `/proc/<pid>/stat` times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/**
 * The fields of a `/proc/<pid>/stat` line the tree needs: the parent's pid and the CPU ticks
 * (user + system) of the process and of its children it has waited for. Counting the waited-for
 * children's time keeps the CPU of an agent that exited during a measurement in the tree's total.
 * The command name (field 2) may hold spaces and parentheses, so fields are read after its last `)`.
 */
export function parseStat(line) {
  const close = line.lastIndexOf(')');
  if (close < 0) throw new Error(`not a /proc/<pid>/stat line: ${line.slice(0, 80)}`);
  const pid = Number(line.slice(0, line.indexOf(' ')));
  // fields[0] is field 3 (state): ppid is field 4; utime, stime, cutime, cstime are 14–17.
  const fields = line.slice(close + 2).split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return { pid, ppid: Number(fields[1]), ticks };
}

/** `VmRSS` of a `/proc/<pid>/status` text, in KiB (0 for a kernel thread or a zombie). */
export function parseRssKiB(status) {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0);
}

/** `Pss` of a `/proc/<pid>/smaps_rollup` text, in KiB: RSS with each shared page split among its sharers. */
export function parsePssKiB(rollup) {
  return Number(/^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1] ?? 0);
}

/** `root` and every process descending from it, given each process's parent (`Map<pid, ppid>`). */
export function descendants(root, parents) {
  const childrenOf = new Map();
  for (const [pid, ppid] of parents) {
    if (!childrenOf.has(ppid)) childrenOf.set(ppid, []);
    childrenOf.get(ppid).push(pid);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(childrenOf.get(tree[i]) ?? []));
  return tree;
}

/** Reads a file of /proc, or `undefined` when the process is gone meanwhile. */
function readProc(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Every live process's stat fields, by pid. */
function allStats() {
  const stats = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const line = readProc(`/proc/${name}/stat`);
    if (line !== undefined) stats.set(Number(name), parseStat(line));
  }
  return stats;
}

/** Whether `pid` is a live process (a zombie is not: it has exited and waits to be reaped). */
export function alive(pid) {
  const line = readProc(`/proc/${pid}/stat`);
  return line !== undefined && line[line.lastIndexOf(')') + 2] !== 'Z';
}

/** The pids of `root`'s tree right now (`root` first). */
export function treePids(root) {
  const stats = allStats();
  if (!stats.has(root)) return [];
  return descendants(root, new Map([...stats].map(([pid, stat]) => [pid, stat.ppid])));
}

/** CPU time (user + system, children waited for included) used so far by `root`'s tree, in ms. */
export function treeCpuMs(root) {
  const stats = allStats();
  const pids = descendants(root, new Map([...stats].map(([pid, stat]) => [pid, stat.ppid])));
  const ticks = pids.reduce((sum, pid) => sum + (stats.get(pid)?.ticks ?? 0), 0);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** CPU time (user + system) used so far by the process `root` itself, its children not included, in ms. */
export function ownCpuMs(root) {
  const line = readProc(`/proc/${root}/stat`);
  if (line === undefined) return NaN;
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * Memory of `root`'s tree: the sum of its processes' RSS (what the targets use; pages
 * shared between processes count once per process) and of their PSS (shared pages split), in
 * KiB, with the RSS of `root` alone and the number of processes.
 */
export function treeMemory(root) {
  const pids = treePids(root);
  let rssKiB = 0;
  let pssKiB = 0;
  let rootRssKiB = 0;
  for (const pid of pids) {
    const rss = parseRssKiB(readProc(`/proc/${pid}/status`) ?? '');
    rssKiB += rss;
    if (pid === root) rootRssKiB = rss;
    pssKiB += parsePssKiB(readProc(`/proc/${pid}/smaps_rollup`) ?? '');
  }
  return { rssKiB, pssKiB, rootRssKiB, processes: pids.length };
}
