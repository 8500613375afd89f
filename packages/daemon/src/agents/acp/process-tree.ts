import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The environment variable every agent process is started with, set to its tree's own mark:
 * children inherit it, so a descendant that left the agent's process group (`setsid`) and was
 * re-parented to pid 1 when the agent died is still found by it.
 */
export const TREE_MARK_VARIABLE = 'SLUICE_AGENT_TREE';

/**
 * The process tree of one agent: its process group (the agent is started `detached`, so its
 * pid is the group id) plus every process that descends from it by parent pid or carries its
 * mark in its environment (docs/decisions/031-agent-process-hardening.md). Signalled as a
 * whole, synchronously, so it works from `process.on('exit')` too.
 */
export class ProcessTree {
  /** The value of {@link TREE_MARK_VARIABLE} in this tree. */
  readonly mark = randomBytes(12).toString('hex');
  private leader: number | undefined;

  /** The agent's pid once it is spawned (its group id: it is spawned detached). */
  setLeader(pid: number | undefined): void {
    this.leader = pid;
  }

  /**
   * Sends `signal` to the group and to every member; the gone are ignored. The group is
   * signalled only while a marked process is in it (its id may be reused once it is empty).
   */
  signal(signal: NodeJS.Signals): void {
    const table = processTable();
    if (table === undefined) {
      if (this.leader !== undefined) sendSignal(-this.leader, signal);
      return;
    }
    const { members, groupAlive } = this.find(table);
    if (groupAlive && this.leader !== undefined) sendSignal(-this.leader, signal);
    for (const pid of members) sendSignal(pid, signal);
  }

  /** Processes of the tree still running (zombies excluded), the leader included. */
  members(): number[] {
    const table = processTable();
    return table === undefined ? [] : this.find(table).members;
  }

  private find(table: readonly ProcEntry[]): { members: number[]; groupAlive: boolean } {
    const needle = `${TREE_MARK_VARIABLE}=${this.mark}`;
    const marked = new Set<number>();
    for (const entry of table)
      if (entry.state !== 'Z' && entry.pid !== process.pid && environHas(entry.pid, needle))
        marked.add(entry.pid);
    const found = new Set(marked);
    const leader = this.leader;
    const groupAlive =
      leader !== undefined && table.some((entry) => entry.pgrp === leader && marked.has(entry.pid));
    for (const entry of table)
      if (groupAlive && entry.pgrp === leader && entry.state !== 'Z') found.add(entry.pid);
    // Those that cleared their environment still descend from a live, marked leader.
    if (leader !== undefined && marked.has(leader))
      for (const pid of descendants(table, leader)) found.add(pid);
    return { members: [...found], groupAlive };
  }
}

/** One process of the table: its ids and state, from `/proc/<pid>/stat`. */
export interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  readonly state: string;
}

/** Every process of this machine's `/proc` (undefined where there is none: no tree is tracked). */
export function processTable(): ProcEntry[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const table: ProcEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so split after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.push({ pid: Number(name), state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]) });
    } catch {
      // it exited while we looked
    }
  }
  return table;
}

/** The pids below `root` by parent pid. */
export function descendants(table: readonly ProcEntry[], root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of table) {
    if (entry.state === 'Z') continue;
    const list = children.get(entry.ppid);
    if (list === undefined) children.set(entry.ppid, [entry.pid]);
    else list.push(entry.pid);
  }
  const found: number[] = [];
  const seen = new Set<number>();
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    // A table read while pids are reused could hold a cycle: visit each pid once.
    if (seen.has(pid)) continue;
    seen.add(pid);
    found.push(pid);
    for (const child of children.get(pid) ?? []) stack.push(child);
  }
  return found;
}

function environHas(pid: number, needle: string): boolean {
  try {
    // NUL-separated `KEY=value` entries; another user's processes are unreadable (EACCES): not ours.
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(needle);
  } catch {
    return false;
  }
}

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: already gone; EPERM: not ours (a reused pid), left alone
  }
}

/** Trees not yet known to be gone: the daemon's exit SIGKILLs them, synchronously. */
const liveTrees = new Set<ProcessTree>();
let exitHookInstalled = false;

/** Tracks `tree` until {@link untrack}: if the daemon exits first, the tree is killed with it. */
export function track(tree: ProcessTree): void {
  liveTrees.add(tree);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const live of liveTrees) live.signal('SIGKILL');
    liveTrees.clear();
  });
}

/** The tree was swept for good. */
export function untrack(tree: ProcessTree): void {
  liveTrees.delete(tree);
}
