import { systemClock, type Clock } from '@sluice/runtime';
import {
  UnknownAgentError,
  type Agent,
  type AgentHost,
  type AgentSessionStart,
  type AgentTurn,
  type TurnResult,
} from '../../sessions/index.js';
import {
  DEFAULT_AGENT_CANCEL_GRACE_MS,
  DEFAULT_AGENT_IDLE_TIMEOUT_MS,
  DEFAULT_AGENT_LIVENESS_TIMEOUT_MS,
  DEFAULT_AGENT_MAX_PROCESSES,
  DEFAULT_AGENT_SESSIONS_PER_PROCESS,
  DEFAULT_AGENT_SPARE_SESSIONS,
  DEFAULT_AGENT_START_TIMEOUT_MS,
  DEFAULT_AGENT_TURN_IDLE_TIMEOUT_MS,
} from '../../defaults.js';
import { AGENT_MEMORY_BUDGET_SHARE } from './agent-pool-defaults.js';
import { integerInRange, positiveInteger } from '../../validate.js';
import type { AgentLog, AgentProcess } from './agent-process.js';
import { answerAgentRequest, relayNotification } from './agent-requests.js';
import { checkAgentCommands, type AgentCommand } from './command-line.js';
import type { AgentError } from './errors.js';
import { describePool, type AgentPoolReport } from './pool-report.js';
import { effectiveMemoryLimitBytes } from './process-memory.js';
import { ProcessPool, type GatewayCredentials } from './process-pool.js';
import { SessionOpener } from './session-opener.js';
import type { SessionLink } from './session-link.js';
import { TurnRunner } from './turn-runner.js';

/** Options of {@link AcpAgentPool}; every number is validated at construction. */
export interface AcpAgentPoolOptions {
  /** The agents sessions can run on; the first is the default. */
  agents: readonly AgentCommand[];
  /** Sessions one process hosts; default 32 (docs/decisions/030). */
  sessionsPerProcess?: number;
  /** Processes at once; default 64 (memory is the bound that matters: `memoryBudgetMb`). */
  maxProcesses?: number;
  /**
   * Bound of the agent processes' trees' resident memory together, in MiB; default half the
   * cgroup's or the machine's memory.
   */
  memoryBudgetMb?: number;
  /** The daemon's workspace: {@link preheat} starts one process per agent there. */
  workspace?: string;
  /** Start processes before sessions need them (sharing only); default true. */
  preheat?: boolean;
  /** Ready agent sessions each shared process keeps for creates to adopt (docs/decisions/030); 0 = none. */
  spareSessions?: number;
  /** A process without a running turn is retired after this long; default 5 minutes. */
  idleTimeoutMs?: number;
  /** A liveness probe unanswered this long kills the process; default 30 s. */
  livenessTimeoutMs?: number;
  /** Pause between liveness probes; default a third of `livenessTimeoutMs`. */
  livenessIntervalMs?: number;
  /** After `session/cancel`, how long the prompt's answer may take before the process is killed; default 10 s. */
  cancelGraceMs?: number;
  /** Bound of `initialize`, `session/new` and `session/load`; default 10 s. */
  startTimeoutMs?: number;
  /** A turn with neither agent output nor a model call this long ends `agent_unresponsive`; default 15 min, 0 = never. */
  turnIdleTimeoutMs?: number;
  /** True while a model call of the session runs: its turn is not idle. */
  modelCallRunning?: (sessionId: string) => boolean;
  /** The daemon's session credentials: each session's agent calls the gateway with its own. */
  credentials?: GatewayCredentials;
  /** The gateway's base URL (`http://host:port/v1`) once the daemon listens. */
  gatewayUrl?: () => string | undefined;
  /** The gateway's model an agent asks for (`OPENAI_MODEL`): the catalogue's default model. */
  gatewayModel?: string;
  /** Environment of the agent processes; default the daemon's. */
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** Where agents' stderr and process events go. */
  log?: AgentLog;
}

/** A signal that never aborts: a re-open that no turn waits for. */
const NEVER_ABORTED = new AbortController().signal;
const SILENT: AgentLog = { debug: () => {}, info: () => {}, warn: () => {} };
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Runs sessions on external ACP agents over stdio (`sluice serve --agent "qwen --acp"`): the
 * `Agent` port, implemented by a pool of agent processes. A process that crashes, exits or
 * stops answering ends the running prompts of only the sessions it hosted (`agent_crashed`,
 * `agent_unresponsive`) and publishes `session_died` on each; their next prompt re-opens them
 * in a fresh process. See docs/decisions/015-agent-process-model.md.
 */
export class AcpAgentPool implements Agent {
  readonly agents: readonly AgentCommand[];
  /** The model every process calls (`OPENAI_MODEL`); a session may name no other. */
  private readonly gatewayModel: string | undefined;
  private readonly links = new Map<string, SessionLink>();
  private readonly byProcess = new Map<AgentProcess, Map<string, SessionLink>>();
  private readonly pool: ProcessPool;
  private readonly opener: SessionOpener;
  private readonly turns: TurnRunner;
  private readonly credentials: GatewayCredentials | undefined;
  private readonly perSessionCredentials: boolean;
  private readonly sharing: boolean;
  private readonly log: AgentLog;
  private host: AgentHost | undefined;
  private closed = false;
  private readonly workspace: string | undefined;

  constructor(options: AcpAgentPoolOptions) {
    checkAgentCommands(options.agents);
    this.agents = options.agents.map((agent) => ({ name: agent.name, command: [...agent.command] }));
    this.gatewayModel = options.gatewayModel;
    const livenessTimeoutMs = integerInRange(
      'livenessTimeoutMs',
      options.livenessTimeoutMs ?? DEFAULT_AGENT_LIVENESS_TIMEOUT_MS,
      1,
      MAX_TIMEOUT_MS,
    );
    const clock = options.clock ?? systemClock;
    const log = options.log ?? SILENT;
    this.log = log;
    this.credentials = options.credentials;
    const sessionsPerProcess = positiveInteger(
      'sessionsPerProcess',
      options.sessionsPerProcess ?? DEFAULT_AGENT_SESSIONS_PER_PROCESS,
    );
    // One session per process: the session's own credential goes in the process's env.
    this.perSessionCredentials = sessionsPerProcess === 1 && options.credentials !== undefined;
    this.sharing = sessionsPerProcess > 1;
    const startTimeoutMs = integerInRange(
      'startTimeoutMs',
      options.startTimeoutMs ?? DEFAULT_AGENT_START_TIMEOUT_MS,
      1,
      MAX_TIMEOUT_MS,
    );
    this.workspace = options.workspace;
    this.pool = new ProcessPool({
      sessionsPerProcess,
      maxProcesses: positiveInteger('maxProcesses', options.maxProcesses ?? DEFAULT_AGENT_MAX_PROCESSES),
      memoryBudgetBytes: memoryBudgetBytes(options.memoryBudgetMb),
      preheat: options.preheat ?? true,
      spareSessions: integerInRange(
        'spareSessions',
        options.spareSessions ?? DEFAULT_AGENT_SPARE_SESSIONS,
        0,
        1_024,
      ),
      idleTimeoutMs: integerInRange(
        'idleTimeoutMs',
        options.idleTimeoutMs ?? DEFAULT_AGENT_IDLE_TIMEOUT_MS,
        1,
        MAX_TIMEOUT_MS,
      ),
      livenessTimeoutMs,
      startTimeoutMs,
      livenessIntervalMs: integerInRange(
        'livenessIntervalMs',
        options.livenessIntervalMs ?? Math.max(1, Math.floor(livenessTimeoutMs / 3)),
        1,
        MAX_TIMEOUT_MS,
      ),
      clock,
      log,
      env: options.env ?? process.env,
      credentials: options.credentials,
      gatewayUrl: options.gatewayUrl,
      gatewayModel: options.gatewayModel,
      handlers: (proc) => ({
        onRequest: (method, params) => answerAgentRequest((id) => this.linkOf(proc(), id), method, params),
        onNotification: (method, params, bytes) =>
          relayNotification(
            (id) => this.linkOf(proc(), id),
            this.host,
            method,
            params,
            bytes,
            (id, update, size) => this.pool.spares.hold(proc(), id, update, size),
          ),
      }),
      onDeath: (proc, cause) => this.onDeath(proc, cause),
    });
    this.opener = new SessionOpener(this.pool, startTimeoutMs, (proc, link) => this.register(proc, link));
    this.turns = this.turnRunner(options, clock);
  }

  private turnRunner(options: AcpAgentPoolOptions, clock: Clock): TurnRunner {
    return new TurnRunner({
      pool: this.pool,
      clock,
      cancelGraceMs: integerInRange(
        'cancelGraceMs',
        options.cancelGraceMs ?? DEFAULT_AGENT_CANCEL_GRACE_MS,
        1,
        MAX_TIMEOUT_MS,
      ),
      credentials: options.credentials,
      turnIdleTimeoutMs: integerInRange(
        'turnIdleTimeoutMs',
        options.turnIdleTimeoutMs ?? DEFAULT_AGENT_TURN_IDLE_TIMEOUT_MS,
        0,
        MAX_TIMEOUT_MS,
      ),
      modelCallRunning: options.modelCallRunning ?? (() => false),
    });
  }

  /** Agent processes running now. */
  get processCount(): number {
    return this.pool.processes.size;
  }

  /** Process ids of the agent processes running now. */
  pids(): number[] {
    return [...this.pool.processes].flatMap((proc) => (proc.child.pid === undefined ? [] : [proc.child.pid]));
  }

  /** Starts one process per configured agent in the daemon's workspace (call once the gateway listens). */
  preheat(): void {
    if (this.workspace === undefined || this.closed) return;
    for (const agent of this.agents) this.pool.preheat(agent, this.workspace);
  }

  /** The agent processes now: sessions, turns and measured memory of each (snapshot, metrics, status). */
  describe(): AgentPoolReport {
    return describePool(this.pool);
  }

  attach(host: AgentHost): void {
    this.host = host;
  }

  /** Opens the session in an agent process now, so that an agent that cannot run it refuses the create. */
  async openSession(start: AgentSessionStart): Promise<void> {
    const agent =
      start.agent === undefined ? this.agents[0]! : this.agents.find((a) => a.name === start.agent);
    if (agent === undefined)
      throw new UnknownAgentError(
        start.agent,
        this.agents.map((a) => a.name),
      );
    const link = this.newLink(start.sessionId, agent, start.cwd, start.workspaceCwd);
    link.model = this.switchTo(start.model);
    try {
      await this.opener.openAtCreate(link);
    } catch (error) {
      this.sessionClosed(start.sessionId);
      throw error;
    }
    // An adopted spare's updates: published once the session is live (after this returns).
    if (link.held !== undefined) setImmediate(() => this.publishHeld(link));
  }

  /** Publishes what the agent sent for an adopted spare, in order, before anything newer. */
  private publishHeld(link: SessionLink): void {
    const held = link.held;
    link.held = undefined;
    if (held === undefined || this.links.get(link.sessionId) !== link) return;
    if (held.dropped > 0)
      this.log.warn(
        { agent: link.agent.name, dropped: held.dropped },
        'spare session updates over the bound',
      );
    const lookup = (): SessionLink => link;
    for (const update of held.updates)
      relayNotification(lookup, this.host, 'session/update', { sessionId: link.agentSessionId, update }, 0);
  }

  async runTurn(turn: AgentTurn): Promise<TurnResult> {
    // A session restored from the store or branched was never opened here: the default agent,
    // with its history replayed into the first prompt.
    const link = this.links.get(turn.sessionId) ?? this.adopt(turn);
    await this.opener.ensureOpen(link, turn.signal);
    if (turn.signal.aborted) return { stopReason: 'cancelled' };
    return this.turns.run(link, turn);
  }

  /**
   * The model a session must switch to: its own, unless its processes already call that one.
   * A pool given no gateway model does not choose its agents' model: none then.
   */
  private switchTo(model: string | undefined): string | undefined {
    return this.gatewayModel === undefined || model === this.gatewayModel ? undefined : model;
  }

  sessionClosed(sessionId: string): void {
    const link = this.links.get(sessionId);
    if (link === undefined) return;
    this.links.delete(sessionId);
    if (link.credential !== undefined) this.credentials?.revoke(sessionId);
    const proc = link.process;
    link.process = undefined;
    this.unregister(link);
    if (proc !== undefined) this.pool.sessionLeft(proc, sessionId);
  }

  /** Forgets the agent session of `link`, also one registered before its open failed (an adopted spare). */
  private unregister(link: SessionLink): void {
    const id = link.agentSessionId;
    if (id === undefined) return;
    for (const [proc, sessions] of this.byProcess) {
      if (sessions.get(id) !== link) continue;
      sessions.delete(id);
      if (proc.credentialKey !== undefined) this.credentials?.unbindAgentSession(proc.credentialKey, id);
    }
  }

  /** Ends every agent process (daemon shutdown); their sessions are not told they died. */
  close(): Promise<void> {
    this.closed = true;
    return this.pool.retireAll();
  }

  private newLink(sessionId: string, agent: AgentCommand, cwd: string, workspaceCwd: string): SessionLink {
    const link: SessionLink = {
      sessionId,
      agent,
      cwd,
      workspaceCwd,
      process: undefined,
      agentSessionId: undefined,
      opening: undefined,
      reopen: false,
      replayPending: false,
      loading: false,
      turn: undefined,
      model: undefined,
      credential: undefined,
      held: undefined,
    };
    if (this.perSessionCredentials) link.credential = this.credentials!.issue(sessionId);
    this.links.set(sessionId, link);
    return link;
  }

  private adopt(turn: AgentTurn): SessionLink {
    const link = this.newLink(turn.sessionId, this.agents[0]!, turn.cwd, turn.workspaceCwd);
    link.model = this.switchTo(turn.model);
    link.replayPending = turn.conversation.length > 0;
    return link;
  }

  private register(proc: AgentProcess, link: SessionLink): void {
    let sessions = this.byProcess.get(proc);
    if (sessions === undefined) this.byProcess.set(proc, (sessions = new Map()));
    if (link.agentSessionId === undefined) return;
    sessions.set(link.agentSessionId, link);
    // A shared process's calls name the agent's session id: that is this session.
    if (proc.credentialKey !== undefined)
      this.credentials?.bindAgentSession(proc.credentialKey, link.agentSessionId, link.sessionId);
  }

  private linkOf(proc: AgentProcess, agentSessionId: unknown): SessionLink | undefined {
    return typeof agentSessionId === 'string' ? this.byProcess.get(proc)?.get(agentSessionId) : undefined;
  }

  private onDeath(proc: AgentProcess, cause: AgentError): void {
    this.pool.forget(proc);
    const sessions = this.byProcess.get(proc);
    this.byProcess.delete(proc);
    for (const link of sessions?.values() ?? []) {
      if (link.process !== proc) continue;
      link.process = undefined;
      link.reopen = true;
      if (proc.retired || this.closed || !this.links.has(link.sessionId)) continue;
      const exit = proc.child;
      this.host?.publish(link.sessionId, {
        type: 'session_died',
        data: {
          sessionId: link.sessionId,
          reason: 'channel_closed',
          exitCode: exit.exitCode,
          signalCode: exit.signalCode ?? (cause.code === 'agent_unresponsive' ? 'SIGKILL' : null),
          code: cause.code,
          message: cause.message,
          recoverable: true,
        },
      });
      this.reopen(link);
    }
  }

  /** Opens a session whose process died in a fresh one now, so its next prompt does not wait. */
  private reopen(link: SessionLink): void {
    if (!this.sharing) return;
    this.opener.ensureOpen(link, NEVER_ABORTED).catch((error: unknown) => {
      // its next prompt tries again and reports the failure on its own stream
      this.log.warn(
        { agent: link.agent.name, error: (error as Error).message },
        'agent session re-open failed',
      );
    });
  }
}

/** `memoryBudgetMb` in bytes; by default a share of the memory the cgroup or machine allows. */
function memoryBudgetBytes(memoryBudgetMb: number | undefined): number {
  return memoryBudgetMb === undefined
    ? Math.floor(effectiveMemoryLimitBytes() * AGENT_MEMORY_BUDGET_SHARE)
    : positiveInteger('memoryBudgetMb', memoryBudgetMb) * 1_048_576;
}
