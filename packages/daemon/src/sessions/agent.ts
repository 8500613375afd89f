import type { ConversationMessage } from '@sluice/store';

/** One message of a session's conversation history, as agents and the store see it. */
export type { ConversationMessage };

/** An ACP content block of a prompt; the bridge itself only reads `type: 'text'` blocks. */
export interface ContentBlock {
  readonly type: string;
  readonly text?: string;
  readonly [key: string]: unknown;
}

/** An ACP session update an agent streams during a turn (`agent_message_chunk`, `tool_call`, …). */
export interface SessionUpdate {
  readonly sessionUpdate: string;
  readonly [key: string]: unknown;
}

/** Why a turn ended (ACP stop reasons). */
export type StopReason = 'end_turn' | 'max_tokens' | 'max_turn_requests' | 'refusal' | 'cancelled';

/** Kinds of a permission option (ACP `PermissionOptionKind`). */
export type PermissionOptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

/** One choice offered to the user for a tool call (ACP `PermissionOption`). */
export interface PermissionOption {
  readonly optionId: string;
  readonly name: string;
  readonly kind: PermissionOptionKind;
}

/** What the user decided (ACP `RequestPermissionOutcome`); `cancelled` means "abort the turn". */
export type PermissionOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

/** An agent's question to the session's clients (ACP `session/request_permission` params, less the session). */
export interface PermissionRequest {
  /** The ACP tool call the permission is about (`toolCallId`, `title`, `kind`, …). */
  readonly toolCall: Readonly<Record<string, unknown>>;
  readonly options: readonly PermissionOption[];
}

/** Everything an agent gets for one turn. */
export interface AgentTurn {
  readonly sessionId: string;
  /** The session's working directory (absolute, inside `workspaceCwd`). */
  readonly cwd: string;
  /** The served workspace the session lives in (its root). */
  readonly workspaceCwd: string;
  readonly promptId: string;
  readonly prompt: readonly ContentBlock[];
  /** The durable task budget the prompt was sent with (`budgetId`): its model calls are charged to it. */
  readonly budgetId?: string;
  /** The session's catalogue model (`POST /session {"model"}`); absent: the catalogue's default. */
  readonly model?: string;
  /** The history before this turn (bounded, oldest messages trimmed first). */
  readonly conversation: readonly ConversationMessage[];
  /** Aborted on cancel, removal, deadline and session close; the agent must honour it. */
  readonly signal: AbortSignal;
  /** Streams an update; published as `session_update` until the turn's terminal event. */
  emit(update: SessionUpdate): void;
  /**
   * Asks the session's clients to allow a tool call (PROTOCOL §7) and resolves with the first
   * valid vote, a reject option on timeout, or `cancelled` once the turn is aborted. Present
   * when the daemon has a permission broker; an agent without tools never calls it.
   */
  requestPermission?(request: PermissionRequest): Promise<PermissionOutcome>;
}

/** How a turn ended, and the messages it adds to the history after the user's prompt. */
export interface TurnResult {
  stopReason: StopReason | (string & {});
  messages?: ConversationMessage[];
}

/**
 * The plug-in boundary of the session layer: runs one turn. Errors it throws that carry a
 * string `code` (the model runtime's `model_queue_timeout`, `model_overloaded`, …) reach the
 * client as `turn_error.code`; a string `errorKind` is passed along too.
 */
export interface Agent {
  runTurn(turn: AgentTurn): Promise<TurnResult>;
  /** Told once a session closed (its `session_closed` was published): drop what it held. */
  sessionClosed?(sessionId: string): void;
  /**
   * Prepares a new session before its create is answered (an external agent opens it in its
   * process). Rejecting refuses the create with that error; nothing of the session is kept.
   * Must settle within a bound of its own.
   */
  openSession?(start: AgentSessionStart): Promise<void>;
  /** Given once, when the bridge is built: how the agent publishes events outside a turn. */
  attach?(host: AgentHost): void;
}

/** A session being created, as {@link Agent.openSession} sees it. */
export interface AgentSessionStart {
  readonly sessionId: string;
  readonly cwd: string;
  readonly workspaceCwd: string;
  /** The agent the client chose by name (`POST /session` body `agent`); the default when absent. */
  readonly agent?: string;
  /** The session's catalogue model, when the daemon has a catalogue. */
  readonly model?: string;
}

/** What an agent may do to sessions outside a turn. */
export interface AgentHost {
  /** Publishes an event on a live session's stream; dropped once the session is gone. */
  publish(sessionId: string, event: { type: string; data: Record<string, unknown> }): void;
}

/** The prompt's text blocks joined by newlines — what is echoed, queued and recorded. */
export function promptText(prompt: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of prompt)
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
  return parts.join('\n');
}
