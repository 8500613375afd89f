import { CataloguedError, describeValue, type CodesOf } from '@sluice/protocol';

/** Stable codes of an external agent's failures; their wire forms are in @sluice/protocol's catalogue. */
export type AgentErrorCode = CodesOf<
  | 'agent_unavailable'
  | 'agent_crashed'
  | 'agent_unresponsive'
  | 'agent_pool_exhausted'
  | 'agent_capacity'
  | 'agent_error'
>;

/** Longest excerpt of an agent's own message carried in an error. */
const MAX_AGENT_MESSAGE_CHARS = 500;

/** The agent's own words, bounded and on one line. */
export function agentMessageExcerpt(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > MAX_AGENT_MESSAGE_CHARS ? `${line.slice(0, MAX_AGENT_MESSAGE_CHARS)}…` : line;
}

/** Base of an external agent's errors: a stable `code`, never a message to match. */
export abstract class AgentError extends CataloguedError<AgentErrorCode> {}

/**
 * The agent cannot run sessions: its command is not installed, `initialize` failed, or it
 * needs authentication (HTTP `502` at session create). `agentMessage` is its own message.
 */
export class AgentUnavailableError extends AgentError {
  readonly code = 'agent_unavailable';
  readonly agentMessage: string;
  constructor(
    readonly agent: string,
    reason: string,
    agentMessage: string,
  ) {
    const excerpt = agentMessageExcerpt(agentMessage);
    super(`agent "${agent}" is unavailable: ${reason}${excerpt === '' ? '' : `: ${excerpt}`}`);
    this.agentMessage = excerpt;
  }

  override wireDetails(): Record<string, unknown> {
    return { agent: this.agent, agentMessage: this.agentMessage };
  }
}

/** The agent process exited or crashed; only the sessions it hosted are affected. */
export class AgentCrashedError extends AgentError {
  readonly code = 'agent_crashed';
  constructor(
    readonly agent: string,
    readonly exitCode: number | null,
    readonly signalCode: string | null,
  ) {
    super(
      `agent "${agent}" process ended (exit code ${String(exitCode)}, signal ${String(signalCode)}); the next prompt starts a fresh one`,
    );
  }
}

/** The agent process did not answer within its bound and was killed. */
export class AgentUnresponsiveError extends AgentError {
  readonly code = 'agent_unresponsive';
  /**
   * @param stopped whether the process was stopped for it; `false` when only this request gave
   *   up and the process, which still answers its liveness probe, keeps its other sessions.
   */
  constructor(
    readonly agent: string,
    readonly waitedMs: number,
    what: string,
    readonly stopped = true,
  ) {
    super(
      stopped
        ? `agent "${agent}" did not answer ${what} within ${waitedMs} ms and was stopped; the next prompt starts a fresh one`
        : `agent "${agent}" did not answer ${what} within ${waitedMs} ms; its process keeps serving its other sessions — try again`,
    );
  }
}

/** Every agent process allowed is busy running a turn (HTTP `503` with `Retry-After`). */
export class AgentPoolExhaustedError extends AgentError {
  readonly code = 'agent_pool_exhausted';
  constructor(readonly maxProcesses: number) {
    super(
      `all ${maxProcesses} agent processes are running turns; retry later or raise --agent-max-processes`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { maxProcesses: this.maxProcesses };
  }
}

/**
 * No agent process can take another session: the memory budget allows no new process and the
 * processes of this agent and workspace are full even when packed (HTTP `503` with
 * `Retry-After`); nothing of the session is created.
 */
export class AgentCapacityError extends AgentError {
  readonly code = 'agent_capacity';
  constructor(
    readonly agent: string,
    readonly memoryBudgetBytes: number,
    readonly agentRssBytes: number,
  ) {
    super(
      `agent "${agent}" has no room for another session: its processes are full and the agents use ` +
        `${mib(agentRssBytes)} of the ${mib(memoryBudgetBytes)} memory budget; retry later or raise --agent-memory-budget-mb`,
    );
  }
}

function mib(bytes: number): string {
  return `${Math.round(bytes / 1_048_576)} MiB`;
}

/** The agent answered a prompt with an error of its own (its message, bounded). */
export class AgentTurnFailedError extends AgentError {
  readonly code = 'agent_error';
  constructor(
    readonly agent: string,
    agentMessage: string,
    readonly rpcCode: number,
  ) {
    super(`agent "${agent}" failed the prompt: ${agentMessageExcerpt(agentMessage)}`);
  }
}

/**
 * A session picked a model other than the one its agent's processes call (`OPENAI_MODEL`, the
 * catalogue's default), and the agent offers no per-session switch: its `session/new` answer
 * lists no `models` for ACP's `session/set_model`. Processes are shared per agent and workspace
 * (decision 030), so the process's model cannot change for one session.
 */
export class ModelNotSwitchableError extends CataloguedError<'model_not_switchable'> {
  readonly code = 'model_not_switchable';
  constructor(
    readonly model: string,
    readonly agent: string,
  ) {
    super(
      `model ${describeValue(model, 64)} cannot be given to agent ${JSON.stringify(agent)}: it offers no ` +
        `per-session model switch (ACP session/set_model), and its processes call the catalogue's default; ` +
        `omit model, or name the default`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { model: this.model, agent: this.agent };
  }
}
