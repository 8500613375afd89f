import type { Clock, TimerHandle } from '@sluice/runtime';
import type { SessionUpdate } from '../../sessions/index.js';
import type { AgentLog, AgentProcess } from './agent-process.js';

/** Most updates kept for one agent session before a Sluice session adopts it. */
export const MAX_HELD_UPDATES = 64;
/** Most bytes (of the agent's lines) kept for one agent session before a Sluice session adopts it. */
export const MAX_HELD_BYTES = 4 * 1024 * 1024;
/** Agent session ids not known yet whose updates are kept while `session/new`s run. */
export const MAX_EARLY_IDS = 16;
/** How long a process stays idle before a spare is made in it (after start, a create or a turn). */
export const SPARE_QUIET_MS = 200;
/** Longest pause after failed spare `session/new`s before the next try. */
const MAX_BACKOFF_MS = 60_000;

/** Updates an agent sent for a session nobody reads yet, kept in order within bounds. */
export class HeldUpdates {
  readonly updates: SessionUpdate[] = [];
  private bytes = 0;
  /** Updates left out for the bounds. */
  dropped = 0;

  /** Keeps `update`, whose line was `size` bytes, unless that would pass the bounds. */
  add(update: SessionUpdate, size: number): void {
    if (this.updates.length >= MAX_HELD_UPDATES || this.bytes + size > MAX_HELD_BYTES) {
      this.dropped++;
      return;
    }
    this.updates.push(update);
    this.bytes += size;
  }
}

/** A ready agent session: its id, the agent's answer to `session/new` and what it sent since. */
export interface Spare {
  readonly agentSessionId: string;
  readonly cwd: string;
  readonly answer: unknown;
  readonly held: HeldUpdates;
}

/** What {@link SpareSessions} needs from the pool that owns the processes. */
export interface SparePolicy {
  /** Spare sessions each process keeps; 0 = none. */
  readonly count: number;
  readonly clock: Clock;
  readonly log: AgentLog;
  /** Bound of a spare's `session/new`. */
  readonly startTimeoutMs: number;
  /** Whether `proc` may open one more agent session now: alive, idle, below its capacity with `extra` more. */
  canAdd(proc: AgentProcess, extra: number): boolean;
  /** The workspace `proc` serves: the cwd of its spares. */
  cwdOf(proc: AgentProcess): string | undefined;
}

/** One process's spares, the one being made, its quiet timer and its failures. */
interface ProcessSpares {
  readonly ready: Spare[];
  /** Whether a spare's `session/new` runs. */
  making: boolean;
  timer: TimerHandle | undefined;
  failures: number;
  notBefore: number;
  /** Creates whose own `session/new` runs. */
  opens: number;
  /** While any `session/new` runs (a spare's or a create's): updates for ids not known yet. */
  early: Map<string, HeldUpdates>;
}

/**
 * Agent sessions made in advance (`session/new` while a process is idle), so that creating a
 * Sluice session adopts one instead of waiting for the agent (docs/decisions/030, spares). A
 * process keeps up to `count` for its workspace; they are made one at a time after a quiet
 * period, only while the process runs no turn and opens no session, and die with it.
 */
export class SpareSessions {
  private readonly byProcess = new Map<AgentProcess, ProcessSpares>();

  constructor(private readonly policy: SparePolicy) {}

  /** Spares of `proc`, ready or being made (they count against its capacity). */
  countOf(proc: AgentProcess): number {
    const state = this.byProcess.get(proc);
    if (state === undefined) return 0;
    return state.ready.length + (state.making ? 1 : 0);
  }

  /** Ready spares of `proc`. */
  readyIn(proc: AgentProcess): number {
    return this.byProcess.get(proc)?.ready.length ?? 0;
  }

  /**
   * `proc` became idle: a spare is made after `quietMs` (the quiet period after a create or a
   * turn; none after another spare, so a process refills its spares back to back) if it has
   * fewer than `count`.
   */
  idle(proc: AgentProcess, quietMs = SPARE_QUIET_MS): void {
    if (this.policy.count === 0) return;
    const state = this.stateOf(proc);
    if (state.timer !== undefined || state.making) return;
    if (state.ready.length >= this.policy.count) return;
    const { clock } = this.policy;
    const delay = Math.max(quietMs, state.notBefore - clock.now());
    state.timer = clock.setTimer(() => {
      state.timer = undefined;
      this.make(proc, state);
    }, delay);
  }

  /** `proc` is busy (a create or a turn): no spare is started until it is idle again. */
  busy(proc: AgentProcess): void {
    const state = this.byProcess.get(proc);
    if (state?.timer === undefined) return;
    this.policy.clock.clearTimer(state.timer);
    state.timer = undefined;
  }

  /** A ready spare of `proc` in `cwd`, now no longer a spare; undefined when there is none. */
  take(proc: AgentProcess, cwd: string): Spare | undefined {
    const ready = this.byProcess.get(proc)?.ready;
    const index = ready?.findIndex((spare) => spare.cwd === cwd) ?? -1;
    return index === -1 ? undefined : ready!.splice(index, 1)[0];
  }

  /** Keeps an update the agent sent for one of `proc`'s spares (dropped when it names none). */
  hold(proc: AgentProcess, agentSessionId: unknown, update: SessionUpdate, bytes: number): void {
    const state = this.byProcess.get(proc);
    if (state === undefined || typeof agentSessionId !== 'string') return;
    const spare = state.ready.find((candidate) => candidate.agentSessionId === agentSessionId);
    if (spare !== undefined) {
      spare.held.add(update, bytes);
      return;
    }
    // It may come before the `session/new` answer is seen (same chunk of the agent's output).
    if (!state.making && state.opens === 0) return;
    let held = state.early.get(agentSessionId);
    if (held === undefined) {
      // Only as many ids as `session/new`s can be in flight are real; the rest are dropped.
      if (state.early.size >= MAX_EARLY_IDS) return;
      state.early.set(agentSessionId, (held = new HeldUpdates()));
    }
    held.add(update, bytes);
  }

  /**
   * A create sends its own `session/new` to `proc`: until {@link claim}, what the agent sends for
   * agent session ids not known yet is kept (the answer and the first update may come together).
   */
  beginOpen(proc: AgentProcess): void {
    this.stateOf(proc).opens++;
  }

  /** The create's `session/new` answered `agentSessionId` (or failed: none): what came for it first. */
  claim(proc: AgentProcess, agentSessionId: string | undefined): HeldUpdates | undefined {
    const state = this.byProcess.get(proc);
    if (state === undefined) return undefined;
    const held = agentSessionId === undefined ? undefined : state.early.get(agentSessionId);
    if (agentSessionId !== undefined) state.early.delete(agentSessionId);
    state.opens = Math.max(0, state.opens - 1);
    this.settleEarly(state);
    return held;
  }

  /** Forgets updates for ids no `session/new` in flight can still answer. */
  private settleEarly(state: ProcessSpares): void {
    if (state.opens === 0 && !state.making) state.early.clear();
  }

  /** `proc` is gone: its spares are dropped. */
  forget(proc: AgentProcess): void {
    this.busy(proc);
    this.byProcess.delete(proc);
  }

  private stateOf(proc: AgentProcess): ProcessSpares {
    let state = this.byProcess.get(proc);
    if (state === undefined) {
      state = {
        ready: [],
        making: false,
        timer: undefined,
        failures: 0,
        notBefore: 0,
        opens: 0,
        early: new Map(),
      };
      this.byProcess.set(proc, state);
    }
    return state;
  }

  private make(proc: AgentProcess, state: ProcessSpares): void {
    const cwd = this.policy.cwdOf(proc);
    if (cwd === undefined || state.ready.length >= this.policy.count) return;
    if (!this.policy.canAdd(proc, this.countOf(proc))) return;
    state.making = true;
    const { startTimeoutMs } = this.policy;
    const asked = proc.channel.request('session/new', { cwd, mcpServers: [] });
    proc
      .bounded(asked, 'session/new of a spare', startTimeoutMs, true)
      .then((answer) => {
        const id = (answer as { sessionId?: unknown } | null)?.sessionId;
        if (typeof id !== 'string') throw new Error('session/new answered without a sessionId');
        const held = state.early.get(id) ?? new HeldUpdates();
        state.early.delete(id);
        if (this.byProcess.get(proc) === state) state.ready.push({ agentSessionId: id, cwd, answer, held });
        state.failures = 0;
      })
      .catch((error: unknown) => this.failed(proc, state, error))
      .finally(() => {
        state.making = false;
        this.settleEarly(state);
        if (this.byProcess.get(proc) === state && this.policy.canAdd(proc, this.countOf(proc)))
          this.idle(proc, 0);
      });
  }

  /** A spare's `session/new` failed: dropped, and the next try waits longer each time. */
  private failed(proc: AgentProcess, state: ProcessSpares, error: unknown): void {
    if (proc.dead !== undefined) return;
    state.failures++;
    const backoff = Math.min(MAX_BACKOFF_MS, SPARE_QUIET_MS * 2 ** (state.failures + 2));
    state.notBefore = this.policy.clock.now() + backoff;
    this.policy.log.warn(
      { agent: proc.name, pid: proc.child.pid, error: (error as Error).message, retryInMs: backoff },
      'spare agent session failed',
    );
  }
}
