import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Clock, TimerHandle } from '@sluice/runtime';
import { daemonVersion } from '../../version.js';
import type { AgentCommand } from './command-line.js';
import {
  AgentCrashedError,
  AgentUnavailableError,
  AgentUnresponsiveError,
  type AgentError,
} from './errors.js';
import { JsonRpcChannel, RpcError, type ChannelHandlers } from './json-rpc-channel.js';
import { ProcessTree, TREE_MARK_VARIABLE, track, untrack } from './process-tree.js';

/** The ACP protocol version this client speaks. */
export const ACP_PROTOCOL_VERSION = 1;
/** The method of the liveness probe: unknown to agents, so answered with -32601, which counts. */
export const LIVENESS_METHOD = '_sluice/ping';
/** Longest stderr line passed to the log; longer ones are cut. */
const MAX_LOG_LINE_CHARS = 2_000;
/** Bytes of recent stderr kept to explain an agent that fails to start. */
const STDERR_TAIL_CHARS = 2_000;

/** Where an agent's stderr goes: the daemon log, never a client. */
export interface AgentLog {
  /** Agent stderr lines: they may quote prompts (qwen prints a failed request), so not at info. */
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** How one agent process is started and watched. */
export interface AgentProcessOptions {
  readonly agent: AgentCommand;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly clock: Clock;
  readonly log: AgentLog;
  /** Bound of each liveness probe's answer. */
  readonly livenessTimeoutMs: number;
  /** Pause between a probe's answer and the next probe. */
  readonly livenessIntervalMs: number;
  /** Everything the agent sends but answers to our requests. */
  readonly handlers: Omit<ChannelHandlers, 'onProtocolError'>;
  /** The process is gone (exited, crashed, or killed as unresponsive); told once. */
  onDeath(process: AgentProcess, cause: AgentError): void;
}

/** What `initialize` told us. */
export interface AgentInfo {
  readonly loadSession: boolean;
  readonly authMethods: readonly unknown[];
}

/**
 * Variables every agent gets unless the daemon's environment sets them. qwen-code started as
 * `cli.js --acp` otherwise relaunches itself in a second process for a larger heap (~190 MB
 * more per agent); `qwen serve` sets this for its own agent child too (docs/decisions/030).
 */
export const AGENT_ENV_DEFAULTS: Readonly<Record<string, string>> = { QWEN_CODE_NO_RELAUNCH: 'true' };

/**
 * One external ACP agent process: spawned without a shell, spoken to over its stdio with a
 * {@link JsonRpcChannel}, its stderr logged line by line, and probed for liveness. It dies
 * once — exit, crash, spawn failure, or a kill for not answering — and tells its owner why.
 */
export class AgentProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly channel: JsonRpcChannel;
  /** Sluice sessions opened in this process. */
  readonly sessions = new Set<string>();
  /** Turns running in it now. */
  runningTurns = 0;
  /** When it last ended a turn or opened a session (the clock's time), for idle reaping. */
  lastActiveAt: number;
  info: AgentInfo | undefined;
  /** Resolves once the child process is gone (or never started). */
  readonly exited: Promise<void>;
  /** Sessions being opened in it now (they count against `sessionsPerProcess`). */
  opening = 0;
  /** Ended on purpose (idle, closed, shutdown): its sessions did not die. */
  retired = false;
  /** The gateway credential issued for the process itself (`sessionsPerProcess` > 1). */
  credentialKey: string | undefined;
  /** The agent and everything it started: stopped as a whole whenever the agent stops. */
  readonly tree = new ProcessTree();
  private deathCause: AgentError | undefined;
  private probeTimer: TimerHandle | undefined;
  private stderrTail = '';
  private stderrPartial = '';

  constructor(private readonly options: AgentProcessOptions) {
    const [command, ...args] = options.agent.command;
    this.lastActiveAt = options.clock.now();
    // Its own process group (and session): a signal to the group reaches the agent's tools too.
    this.child = spawn(command!, args, {
      cwd: options.cwd,
      env: { ...AGENT_ENV_DEFAULTS, ...options.env, [TREE_MARK_VARIABLE]: this.tree.mark },
      stdio: 'pipe',
      detached: true,
    });
    this.tree.setLeader(this.child.pid);
    if (this.child.pid !== undefined) track(this.tree);
    this.channel = new JsonRpcChannel(this.child.stdout, this.child.stdin, {
      ...options.handlers,
      onProtocolError: (reason) => this.kill(new AgentCrashedError(this.name, null, `protocol: ${reason}`)),
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => this.onStderr(chunk));
    this.exited = new Promise<void>((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.once('error', () => resolve());
    });
    this.child.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ENOENT' ? `command not found: ${command}` : `cannot start ${command}`;
      this.die(new AgentUnavailableError(this.name, reason, error.message));
    });
    this.child.once('exit', (code, signal) => this.die(new AgentCrashedError(this.name, code, signal)));
  }

  /** The agent's name (`--agent name=…`). */
  get name(): string {
    return this.options.agent.name;
  }

  /** Why it died, once it did. */
  get dead(): AgentError | undefined {
    return this.deathCause;
  }

  /** The last lines the agent wrote to stderr (bounded), to explain a failed start. */
  get recentStderr(): string {
    return this.stderrTail;
  }

  /**
   * `initialize` within `timeoutMs`; an error answer, an exit or silence becomes
   * `AgentUnavailableError` with the agent's own message. Starts the liveness probe.
   */
  async initialize(timeoutMs: number): Promise<AgentInfo> {
    const answer = await this.bounded(
      this.channel.request('initialize', {
        protocolVersion: ACP_PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
        clientInfo: { name: 'sluice', version: daemonVersion() },
      }),
      'initialize',
      timeoutMs,
    ).catch((error: unknown) => {
      throw this.unavailable('initialize failed', error);
    });
    const result = (answer ?? {}) as { agentCapabilities?: { loadSession?: unknown }; authMethods?: unknown };
    this.info = {
      loadSession: result.agentCapabilities?.loadSession === true,
      authMethods: Array.isArray(result.authMethods) ? result.authMethods : [],
    };
    this.scheduleProbe();
    return this.info;
  }

  /** `error` as the reason this agent cannot be used now, with its own words. */
  unavailable(reason: string, error: unknown): AgentUnavailableError {
    if (error instanceof AgentUnavailableError) return error;
    const own =
      error instanceof RpcError ? rpcErrorText(error) : ((error as Error)?.message ?? String(error));
    const detail = error instanceof AgentCrashedError ? `${own}; stderr: ${this.stderrTail}` : own;
    return new AgentUnavailableError(this.name, reason, detail);
  }

  /**
   * `promise`, or `AgentUnresponsiveError` after `timeoutMs`: the process is killed for it unless
   * `keepAlive` (a request to a process whose liveness probe runs: a busy process that answers the
   * probe serves its other sessions on; one that stops answering is ended by the probe).
   */
  bounded<T>(
    promise: Promise<T>,
    what: string,
    timeoutMs = this.options.livenessTimeoutMs,
    keepAlive = false,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.options.clock.setTimer(() => {
        const error = new AgentUnresponsiveError(this.name, timeoutMs, what, !keepAlive);
        if (!keepAlive) this.kill(error);
        reject(error);
      }, timeoutMs);
      promise.then(
        (value) => {
          this.options.clock.clearTimer(timer);
          resolve(value);
        },
        (error: unknown) => {
          this.options.clock.clearTimer(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** Stops the process and its tree now with `cause` (SIGKILL); its sessions learn why at once. */
  kill(cause: AgentError): void {
    if (this.deathCause !== undefined) return;
    this.die(cause);
  }

  /**
   * Ends a process that is no longer needed (idle, or its sessions closed): stdin closed and
   * SIGTERM to its whole tree, so the agent can save its sessions, then SIGKILL to what is left
   * of the tree after `graceMs` (or at the daemon's exit, if that comes first). Its owner is
   * told at once, with `retired` set.
   */
  retire(graceMs: number): void {
    if (this.deathCause !== undefined) return;
    this.retired = true;
    this.child.stdin.end();
    this.tree.signal('SIGTERM');
    const timer = setTimeout(() => this.sweep(), graceMs);
    timer.unref();
    this.die(new AgentCrashedError(this.name, null, 'SIGTERM'), false);
  }

  /** SIGKILL to whatever is left of the tree; the daemon's exit need not look at it again. */
  private sweep(): void {
    this.tree.signal('SIGKILL');
    untrack(this.tree);
  }

  private die(cause: AgentError, killNow = true): void {
    if (this.deathCause !== undefined) return;
    this.deathCause = cause;
    if (this.probeTimer !== undefined) this.options.clock.clearTimer(this.probeTimer);
    this.probeTimer = undefined;
    this.channel.close(cause);
    if (this.retired)
      this.options.log.info({ agent: this.name, pid: this.child.pid }, 'agent process retired');
    else this.options.log.warn({ agent: this.name, pid: this.child.pid, code: cause.code }, cause.message);
    // The agent may still run, and what it started may outlive it (an exit leaves its tools).
    if (killNow) this.sweep();
    this.options.onDeath(this, cause);
  }

  /**
   * The probe's answer within the liveness bound; a bound that passes while the process's CPU
   * time advanced (busy on many turns, not stalled) is extended, at most 4 times. Past that, or
   * without progress, the process is killed as unresponsive.
   */
  private probeWhileBusy(answer: Promise<unknown>): Promise<unknown> {
    const { clock, livenessTimeoutMs } = this.options;
    const pid = this.child.pid;
    return new Promise((resolve, reject) => {
      let cpu = pid === undefined ? 0 : cpuTicks(pid);
      let extensions = 0;
      let timer: TimerHandle;
      const expire = (): void => {
        const now = pid === undefined ? 0 : cpuTicks(pid);
        if (now > cpu && extensions < 4) {
          cpu = now;
          extensions++;
          timer = clock.setTimer(expire, livenessTimeoutMs);
          return;
        }
        const error = new AgentUnresponsiveError(
          this.name,
          livenessTimeoutMs * (extensions + 1),
          'a liveness probe',
        );
        this.kill(error);
        reject(error);
      };
      timer = clock.setTimer(expire, livenessTimeoutMs);
      answer.then(
        (value) => {
          clock.clearTimer(timer);
          resolve(value);
        },
        (error: unknown) => {
          clock.clearTimer(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  private scheduleProbe(): void {
    if (this.deathCause !== undefined) return;
    this.probeTimer = this.options.clock.setTimer(() => {
      this.probeTimer = undefined;
      // issue 27: a shared process busy on many turns (its CPU time advancing) is not stalled
      this.probeWhileBusy(this.channel.request(LIVENESS_METHOD, {})).then(
        () => this.scheduleProbe(),
        (error: unknown) => {
          // An error answer is an answer; only silence (or death) stops the probing.
          if (error instanceof RpcError) this.scheduleProbe();
        },
      );
    }, this.options.livenessIntervalMs);
  }

  private onStderr(chunk: string): void {
    this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    const lines = (this.stderrPartial + chunk).split('\n');
    this.stderrPartial = (lines.pop() ?? '').slice(0, MAX_LOG_LINE_CHARS);
    for (const line of lines) {
      if (line.trim() === '') continue;
      const text = line.length > MAX_LOG_LINE_CHARS ? `${line.slice(0, MAX_LOG_LINE_CHARS)}…` : line;
      this.options.log.debug({ agent: this.name, pid: this.child.pid, stream: 'stderr' }, text);
    }
  }
}

/** CPU time (user + system, in clock ticks) the process `pid` used so far; 0 when unknown. */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** An agent's JSON-RPC error in its own words: the message, and `data` (often the detail) when present. */
export function rpcErrorText(error: RpcError): string {
  if (error.data === undefined || error.data === null) return error.message;
  const details = (error.data as { details?: unknown }).details;
  const data = typeof details === 'string' ? details : JSON.stringify(error.data);
  return `${error.message}: ${data}`;
}
