import type {
  ContentBlock,
  ConversationMessage,
  PermissionOutcome,
  PermissionRequest,
  SessionUpdate,
} from '../../sessions/index.js';
import type { AgentProcess } from './agent-process.js';
import type { AgentCommand } from './command-line.js';
import type { HeldUpdates } from './spare-sessions.js';

/** The turn a session is running in its agent process. */
export interface LinkedTurn {
  readonly promptId: string;
  emit(update: SessionUpdate): void;
  requestPermission?(request: PermissionRequest): Promise<PermissionOutcome>;
  /** The assistant text of `agent_message_chunk` updates so far (the history's answer). */
  text: string;
}

/** A Sluice session and where it runs: the agent, its process and the agent's session id. */
export interface SessionLink {
  readonly sessionId: string;
  readonly agent: AgentCommand;
  cwd: string;
  workspaceCwd: string;
  /** The process the session is open in; undefined until opened, and after that process ended. */
  process: AgentProcess | undefined;
  /** The agent's id of the session (kept after its process ended, for `session/load`). */
  agentSessionId: string | undefined;
  /** Opening it in a process now. */
  opening: Promise<void> | undefined;
  /** The session was open in a process that ended: re-open with `session/load` or a replay. */
  reopen: boolean;
  /** The agent's session is new but the conversation is not: the next prompt carries the history. */
  replayPending: boolean;
  /** A `session/load` is running: the agent's replay of the history is not published again. */
  loading: boolean;
  turn: LinkedTurn | undefined;
  /**
   * The catalogue model the session picked when it is not the one its process calls
   * (`OPENAI_MODEL`): asked for with ACP's `session/set_model` once the session is open.
   */
  model: string | undefined;
  /** The per-session gateway credential in its process's env (`sessionsPerProcess` = 1). */
  credential: string | undefined;
  /**
   * It adopted a spare agent session: what the agent sent for it so far, and after, until the
   * session is live and they are published in order (docs/decisions/030, spares).
   */
  held: HeldUpdates | undefined;
}

/** Longest history replayed into a fresh agent session, in characters (the newest part is kept). */
export const MAX_REPLAY_CHARS = 200_000;

/**
 * The history of a session whose agent process ended, as one text block that leads its next
 * prompt in a new agent session (when the agent cannot `session/load`): the agent continues
 * the conversation instead of starting blind.
 */
export function replayBlock(conversation: readonly ConversationMessage[]): ContentBlock | undefined {
  const lines: string[] = [];
  for (const message of conversation) {
    if (message.role === 'tool') continue;
    lines.push(`[${message.role}]\n${message.content}`);
  }
  if (lines.length === 0) return undefined;
  let transcript = lines.join('\n\n');
  if (transcript.length > MAX_REPLAY_CHARS) transcript = `…${transcript.slice(-MAX_REPLAY_CHARS)}`;
  return {
    type: 'text',
    text:
      'This conversation continues an earlier one whose agent process ended. The earlier ' +
      `messages, oldest first:\n\n${transcript}\n\n[end of earlier messages; the new message follows]`,
  };
}
