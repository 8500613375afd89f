import type { Clock, TimerHandle } from '@sluice/runtime';
import type { SessionCredentials } from '../../gateway/index.js';
import { AgentProcess, type AgentLog, type AgentProcessOptions } from './agent-process.js';
import { AgentSessionHeader } from './agent-session-header.js';
import type { AgentCommand } from './command-line.js';
import { AgentCapacityError, AgentPoolExhaustedError, type AgentError } from './errors.js';
import { ProcessMemory } from './process-memory-meter.js';
import type { SessionLink } from './session-link.js';
import { RestartBackoff } from './restart-backoff.js';
import { SpareSessions } from './spare-sessions.js';

/** The gateway credentials an agent pool issues and scopes to turns. */
export type GatewayCredentials = Pick<
  SessionCredentials,
  'issue' | 'issueShared' | 'bindAgentSession' | 'unbindAgentSession' | 'revoke' | 'beginTurn' | 'endTurn'
>;

/** How long a retired process has after SIGTERM before SIGKILL. */
const RETIRE_GRACE_MS = 2_000;

/** What a {@link ProcessPool} is built from (validated by its owner). */
export interface ProcessPoolOptions {
  readonly sessionsPerProcess: number;
  readonly maxProcesses: number;
  /** Bound of the agents' process trees' resident memory together, in bytes. */
  readonly memoryBudgetBytes: number;
  /** Keep one started process per agent and workspace, and start the next before it is needed. */
  readonly preheat: boolean;
  /** Ready agent sessions each shared process keeps for creates to adopt; 0 = none. */
  readonly spareSessions: number;
  readonly idleTimeoutMs: number;
  readonly livenessTimeoutMs: number;
  /** Bound of `initialize` (a cold start of a real agent takes seconds). */
  readonly startTimeoutMs: number;
  readonly livenessIntervalMs: number;
  readonly clock: Clock;
  readonly log: AgentLog;
  readonly env: NodeJS.ProcessEnv;
  readonly credentials: GatewayCredentials | undefined;
  readonly gatewayUrl: (() => string | undefined) | undefined;
  /** `OPENAI_MODEL` of the processes that call the gateway: a model of its catalogue. */
  readonly gatewayModel: string | undefined;
  readonly handlers: (process: () => AgentProcess) => AgentProcessOptions['handlers'];
  onDeath(process: AgentProcess, cause: AgentError): void;
}

/** Where a process runs sessions: an agent and a workspace. */
interface Home {
  readonly agent: AgentCommand;
  readonly workspace: string;
}

/** A started process's home, its key and when it started. */
interface Started extends Home {
  readonly key: string;
  readonly startedAt: number;
}

const keyOf = (agent: string, workspace: string): string => `${agent}\u0000${workspace}`;

/**
 * The agent processes. Sessions of one agent and workspace share processes, up to
 * `sessionsPerProcess` each; a new process starts when those are full and the memory budget
 * (the process trees' RSS plus one more process) allows; past it, sessions pack into the
 * existing processes up to twice as many, and beyond that a session is refused
 * (`AgentCapacityError`). At `maxProcesses` a new process takes the place of the longest-idle
 * one, or is refused with `AgentPoolExhaustedError`. With `preheat`, one process per agent and
 * workspace stays started and the next starts when the ones in use are three quarters full.
 * A process idle for `idleTimeoutMs` is retired. An idle shared process keeps `spareSessions`
 * agent sessions opened ahead for creates to adopt ({@link SpareSessions}). See docs/decisions/030.
 */
export class ProcessPool {
  readonly processes = new Set<AgentProcess>();
  readonly memory: ProcessMemory;
  /** Agent sessions made ahead in idle shared processes (docs/decisions/030, spares). */
  readonly spares: SpareSessions;
  private readonly ready = new Map<AgentProcess, Promise<unknown>>();
  private readonly homes = new Map<AgentProcess, Started>();
  private readonly idleTimers = new Map<AgentProcess, TimerHandle>();
  /** Retired processes that have not exited yet (SIGTERM sent, SIGKILL after the grace). */
  private readonly exiting = new Set<AgentProcess>();
  private processSeq = 0;
  private readonly sessionHeader = new AgentSessionHeader();
  private readonly restarts: RestartBackoff;
  private closing = false;

  constructor(private readonly options: ProcessPoolOptions) {
    this.memory = new ProcessMemory(options.clock);
    this.restarts = new RestartBackoff(options.clock);
    this.spares = new SpareSessions({
      count: this.shares ? options.spareSessions : 0,
      clock: options.clock,
      log: options.log,
      startTimeoutMs: options.startTimeoutMs,
      canAdd: (proc, extra) =>
        proc.dead === undefined &&
        proc.info !== undefined &&
        this.isIdle(proc) &&
        this.load(proc) + extra < options.sessionsPerProcess,
      cwdOf: (proc) => this.workspaceOf(proc),
    });
  }

  /**
   * A started process with room for `link`'s session, its `opening` count raised (the caller
   * lowers it with {@link opened}). Throws `AgentCapacityError`, `AgentPoolExhaustedError` or
   * the start's failure.
   */
  async acquire(link: SessionLink): Promise<AgentProcess> {
    const proc = this.place(link);
    proc.opening++;
    this.disarmIdle(proc);
    this.lookAhead({ agent: link.agent, workspace: link.workspaceCwd });
    try {
      await this.ready.get(proc);
    } catch (error) {
      proc.opening--;
      throw error;
    }
    return proc;
  }

  /** Starts the first process of `agent` in `workspace` now, if sharing and the budget allow. */
  preheat(agent: AgentCommand, workspace: string): void {
    if (!this.shares || this.live(keyOf(agent.name, workspace)).length > 0 || !this.canStart()) return;
    this.start({ agent, workspace }, workspace, undefined);
  }

  /** Sessions (open or opening) in `proc`. */
  load(proc: AgentProcess): number {
    return proc.sessions.size + proc.opening;
  }

  /** The workspace a process serves. */
  workspaceOf(proc: AgentProcess): string | undefined {
    return this.homes.get(proc)?.workspace;
  }

  /** An open (successful or not) on `proc` finished. */
  opened(proc: AgentProcess): void {
    proc.opening--;
    this.touch(proc);
  }

  turnStarted(proc: AgentProcess): void {
    proc.runningTurns++;
    this.disarmIdle(proc);
  }

  turnEnded(proc: AgentProcess): void {
    proc.runningTurns--;
    this.touch(proc);
  }

  /** A session left `proc` (closed): a process without sessions is retired at once (but a kept one). */
  sessionLeft(proc: AgentProcess, sessionId: string): void {
    proc.sessions.delete(sessionId);
    if (this.isIdle(proc) && proc.sessions.size === 0 && !this.kept(proc)) this.retire(proc);
    else this.touch(proc);
  }

  /** Ends every process (daemon shutdown); resolves once all are gone (SIGKILL after the grace). */
  async retireAll(): Promise<void> {
    this.closing = true;
    this.restarts.cancel();
    for (const proc of [...this.processes]) this.retire(proc);
    await Promise.all([...this.exiting].map((proc) => proc.exited));
    this.sessionHeader.remove();
  }

  /** Forgets a process that died (the owner's `onDeath` calls this first). */
  forget(proc: AgentProcess): void {
    this.processes.delete(proc);
    this.ready.delete(proc);
    this.memory.forget(proc);
    const home = this.homes.get(proc);
    this.homes.delete(proc);
    this.disarmIdle(proc);
    this.spares.forget(proc);
    if (proc.credentialKey !== undefined) this.options.credentials?.revoke(proc.credentialKey);
    // A started process of its agent and workspace died: start the next one ahead (not after a
    // failed start, which would only fail again: the next create reports it), backing off when
    // processes keep dying soon after their start.
    if (home !== undefined && this.options.preheat && proc.info !== undefined && !this.closing)
      this.restarts.afterDeath(home.key, home.startedAt, () => {
        if (!this.closing) this.lookAhead(home);
      });
  }

  get sessionsPerProcess(): number {
    return this.options.sessionsPerProcess;
  }

  get memoryBudgetBytes(): number {
    return this.options.memoryBudgetBytes;
  }

  private get shares(): boolean {
    return this.options.sessionsPerProcess > 1;
  }

  private place(link: SessionLink): AgentProcess {
    const home: Home = { agent: link.agent, workspace: link.workspaceCwd };
    const live = this.live(keyOf(home.agent.name, home.workspace));
    const perProcess = this.options.sessionsPerProcess;
    if (this.shares) {
      // the fullest process with room: a spare started ahead stays spare until it is needed
      const roomy = fullestBelow(live, perProcess, (proc) => this.load(proc));
      if (roomy !== undefined) return roomy;
    }
    if (this.canStart()) return this.start(home, link.cwd, link.credential);
    if (this.shares) {
      const packed = emptiestBelow(live, 2 * perProcess, (proc) => this.load(proc));
      if (packed !== undefined) return packed;
    }
    if (this.processes.size >= this.options.maxProcesses) {
      this.makeRoom();
      if (this.canStart()) return this.start(home, link.cwd, link.credential);
    }
    throw new AgentCapacityError(home.agent.name, this.options.memoryBudgetBytes, this.memoryInUse());
  }

  /**
   * Starts the next process of `home` when every one there is three quarters full (with fewer
   * than 4 sessions per process there is no "nearly full": processes start when needed).
   */
  private lookAhead(home: Home): void {
    const perProcess = this.options.sessionsPerProcess;
    const slack = Math.floor(perProcess / 4);
    if (!this.options.preheat || slack === 0) return;
    const threshold = perProcess - slack;
    const live = this.live(keyOf(home.agent.name, home.workspace));
    if (live.some((proc) => this.load(proc) < threshold) || !this.canStart()) return;
    this.start(home, home.workspace, undefined);
  }

  /** Whether one more process fits the count and the memory budget. */
  private canStart(): boolean {
    if (this.processes.size >= this.options.maxProcesses) return false;
    return this.memoryInUse() + this.memory.estimate() <= this.options.memoryBudgetBytes;
  }

  /** The processes' trees' RSS, a starting process counted at the estimate of one. */
  memoryInUse(): number {
    return this.memory.total(this.processes);
  }

  private live(key: string): AgentProcess[] {
    const found: AgentProcess[] = [];
    for (const proc of this.processes)
      if (proc.dead === undefined && this.homes.get(proc)?.key === key) found.push(proc);
    return found;
  }

  private start(home: Home, cwd: string, sessionCredential: string | undefined): AgentProcess {
    // A shared process names each call's session (docs/decisions/030, attribution).
    const env = this.shares ? this.sessionHeader.apply(this.options.env) : { ...this.options.env };
    let credentialKey: string | undefined;
    let credential = sessionCredential;
    if (this.shares && this.options.credentials !== undefined) {
      credentialKey = `agent-process-${++this.processSeq}`;
      credential = this.options.credentials.issueShared(credentialKey);
    }
    const url = this.options.gatewayUrl?.();
    if (url !== undefined && credential !== undefined) {
      env['OPENAI_BASE_URL'] = url;
      env['OPENAI_API_KEY'] = credential;
      // The gateway serves only its catalogue's names: the agent asks for the default model.
      if (this.options.gatewayModel !== undefined) env['OPENAI_MODEL'] = this.options.gatewayModel;
    }
    const proc: AgentProcess = new AgentProcess({
      agent: home.agent,
      cwd,
      env,
      clock: this.options.clock,
      log: this.options.log,
      livenessTimeoutMs: this.options.livenessTimeoutMs,
      livenessIntervalMs: this.options.livenessIntervalMs,
      // Called on the agent's messages, which arrive only once the process exists.
      handlers: this.options.handlers(() => proc),
      onDeath: (dead, cause) => this.options.onDeath(dead, cause),
    });
    proc.credentialKey = credentialKey;
    this.processes.add(proc);
    this.homes.set(proc, {
      ...home,
      key: keyOf(home.agent.name, home.workspace),
      startedAt: this.options.clock.now(),
    });
    const ready = proc.initialize(this.options.startTimeoutMs);
    ready.then(
      () => this.touch(proc),
      () => proc.kill(proc.dead ?? proc.unavailable('initialize failed', 'no answer')),
    );
    this.ready.set(proc, ready);
    return proc;
  }

  /** Retires the longest-idle process when the pool is full; refuses when none is idle. */
  private makeRoom(): void {
    let victim: AgentProcess | undefined;
    for (const proc of this.processes)
      if (this.isIdle(proc) && (victim === undefined || proc.lastActiveAt < victim.lastActiveAt))
        victim = proc;
    if (victim === undefined) throw new AgentPoolExhaustedError(this.options.maxProcesses);
    this.retire(victim);
  }

  private isIdle(proc: AgentProcess): boolean {
    return proc.runningTurns === 0 && proc.opening === 0;
  }

  /** The one live process of its agent and workspace, kept started while preheating. */
  private kept(proc: AgentProcess): boolean {
    const home = this.homes.get(proc);
    return this.options.preheat && this.shares && home !== undefined && this.live(home.key).length === 1;
  }

  private retire(proc: AgentProcess): void {
    if (proc.dead !== undefined) return;
    this.exiting.add(proc);
    void proc.exited.then(() => this.exiting.delete(proc));
    proc.retire(RETIRE_GRACE_MS);
  }

  private touch(proc: AgentProcess): void {
    proc.lastActiveAt = this.options.clock.now();
    if (!this.isIdle(proc) || proc.dead !== undefined) return;
    this.armIdle(proc);
    this.spares.idle(proc);
  }

  private armIdle(proc: AgentProcess): void {
    this.disarmIdle(proc);
    const timer = this.options.clock.setTimer(() => {
      this.idleTimers.delete(proc);
      if (this.isIdle(proc) && !this.kept(proc)) this.retire(proc);
    }, this.options.idleTimeoutMs);
    this.idleTimers.set(proc, timer);
  }

  private disarmIdle(proc: AgentProcess): void {
    this.spares.busy(proc);
    const timer = this.idleTimers.get(proc);
    if (timer === undefined) return;
    this.options.clock.clearTimer(timer);
    this.idleTimers.delete(proc);
  }
}

/** The process with the most sessions among those with fewer than `bound`. */
function fullestBelow<T>(items: readonly T[], bound: number, load: (item: T) => number): T | undefined {
  let best: T | undefined;
  for (const item of items)
    if (load(item) < bound && (best === undefined || load(item) > load(best))) best = item;
  return best;
}

/** The process with the fewest sessions among those with fewer than `bound`. */
function emptiestBelow<T>(items: readonly T[], bound: number, load: (item: T) => number): T | undefined {
  let best: T | undefined;
  for (const item of items)
    if (load(item) < bound && (best === undefined || load(item) < load(best))) best = item;
  return best;
}
