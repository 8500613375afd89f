import type { Clock, TimerHandle } from '@sluice/runtime';
import type { SessionCredentials } from '../../gateway/index.js';
import { AgentProcess, type AgentLog, type AgentProcessOptions } from './agent-process.js';
import { AgentPoolExhaustedError, type AgentError } from './errors.js';
import type { SessionLink } from './session-link.js';

/** The gateway credentials an agent pool issues and scopes to turns. */
export type GatewayCredentials = Pick<SessionCredentials, 'issue' | 'revoke' | 'beginTurn' | 'endTurn'>;

/** How long a retired process has after SIGTERM before SIGKILL. */
const RETIRE_GRACE_MS = 2_000;

/** What a {@link ProcessPool} is built from (validated by its owner). */
export interface ProcessPoolOptions {
  readonly sessionsPerProcess: number;
  readonly maxProcesses: number;
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
  readonly handlers: (process: () => AgentProcess) => AgentProcessOptions['handlers'];
  onDeath(process: AgentProcess, cause: AgentError): void;
}

/**
 * The agent processes: at most `maxProcesses`, each hosting up to `sessionsPerProcess`
 * sessions of one agent. A new process takes the place of the longest-idle one (no turn
 * running, nothing opening) when the pool is full, or is refused with
 * `AgentPoolExhaustedError`; a process idle for `idleTimeoutMs` is retired.
 */
export class ProcessPool {
  readonly processes = new Set<AgentProcess>();
  private readonly ready = new Map<AgentProcess, Promise<unknown>>();
  private readonly idleTimers = new Map<AgentProcess, TimerHandle>();
  /** Retired processes that have not exited yet (SIGTERM sent, SIGKILL after the grace). */
  private readonly exiting = new Set<AgentProcess>();
  private processSeq = 0;

  constructor(private readonly options: ProcessPoolOptions) {}

  /**
   * A started process with room for `link`'s session, its `opening` count raised (the caller
   * lowers it with {@link opened}). Throws `AgentPoolExhaustedError` or the start's failure.
   */
  async acquire(link: SessionLink): Promise<AgentProcess> {
    const shared = this.withRoom(link);
    const proc = shared ?? this.start(link);
    proc.opening++;
    this.disarmIdle(proc);
    try {
      await this.ready.get(proc);
    } catch (error) {
      proc.opening--;
      throw error;
    }
    return proc;
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

  /** A session left `proc` (closed): a process without sessions is retired at once. */
  sessionLeft(proc: AgentProcess, sessionId: string): void {
    proc.sessions.delete(sessionId);
    if (proc.sessions.size === 0 && proc.opening === 0 && proc.runningTurns === 0) this.retire(proc);
    else this.touch(proc);
  }

  /** Ends every process (daemon shutdown); resolves once all are gone (SIGKILL after the grace). */
  async retireAll(): Promise<void> {
    for (const proc of [...this.processes]) this.retire(proc);
    await Promise.all([...this.exiting].map((proc) => proc.exited));
  }

  /** Forgets a process that died (the owner's `onDeath` calls this first). */
  forget(proc: AgentProcess): void {
    this.processes.delete(proc);
    this.ready.delete(proc);
    this.disarmIdle(proc);
    if (proc.credentialKey !== undefined) this.options.credentials?.revoke(proc.credentialKey);
  }

  private withRoom(link: SessionLink): AgentProcess | undefined {
    if (this.options.sessionsPerProcess === 1) return undefined;
    for (const proc of this.processes)
      if (
        proc.name === link.agent.name &&
        proc.dead === undefined &&
        proc.sessions.size + proc.opening < this.options.sessionsPerProcess
      )
        return proc;
    return undefined;
  }

  private start(link: SessionLink): AgentProcess {
    this.makeRoom();
    const env: NodeJS.ProcessEnv = { ...this.options.env };
    let credentialKey: string | undefined;
    let credential = link.credential;
    if (this.options.sessionsPerProcess > 1 && this.options.credentials !== undefined) {
      credentialKey = `agent-process-${++this.processSeq}`;
      credential = this.options.credentials.issue(credentialKey);
    }
    const url = this.options.gatewayUrl?.();
    if (url !== undefined && credential !== undefined) {
      env['OPENAI_BASE_URL'] = url;
      env['OPENAI_API_KEY'] = credential;
    }
    const proc: AgentProcess = new AgentProcess({
      agent: link.agent,
      cwd: link.cwd,
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
    const ready = proc.initialize(this.options.startTimeoutMs);
    ready.catch(() => proc.kill(proc.dead ?? proc.unavailable('initialize failed', 'no answer')));
    this.ready.set(proc, ready);
    return proc;
  }

  /** Retires the longest-idle process when the pool is full; refuses when none is idle. */
  private makeRoom(): void {
    if (this.processes.size < this.options.maxProcesses) return;
    let victim: AgentProcess | undefined;
    for (const proc of this.processes)
      if (
        proc.runningTurns === 0 &&
        proc.opening === 0 &&
        (victim === undefined || proc.lastActiveAt < victim.lastActiveAt)
      )
        victim = proc;
    if (victim === undefined) throw new AgentPoolExhaustedError(this.options.maxProcesses);
    this.retire(victim);
  }

  private retire(proc: AgentProcess): void {
    if (proc.dead !== undefined) return;
    this.exiting.add(proc);
    void proc.exited.then(() => this.exiting.delete(proc));
    proc.retire(RETIRE_GRACE_MS);
  }

  private touch(proc: AgentProcess): void {
    proc.lastActiveAt = this.options.clock.now();
    if (proc.runningTurns === 0 && proc.opening === 0 && proc.dead === undefined) this.armIdle(proc);
  }

  private armIdle(proc: AgentProcess): void {
    this.disarmIdle(proc);
    const timer = this.options.clock.setTimer(() => {
      this.idleTimers.delete(proc);
      if (proc.runningTurns === 0 && proc.opening === 0) this.retire(proc);
    }, this.options.idleTimeoutMs);
    this.idleTimers.set(proc, timer);
  }

  private disarmIdle(proc: AgentProcess): void {
    const timer = this.idleTimers.get(proc);
    if (timer === undefined) return;
    this.options.clock.clearTimer(timer);
    this.idleTimers.delete(proc);
  }
}
