import type { AgentHost, PermissionRequest, SessionUpdate } from '../../sessions/index.js';
import { describeValue } from '@sluice/protocol';
import { RPC_ERROR, RpcError } from './json-rpc-channel.js';
import type { SessionLink } from './session-link.js';
import { dropSkillDetails } from './skill-details.js';
import { readTextFile, writeTextFile } from './workspace-files.js';

/**
 * Most characters of a turn's answer kept as its history message: the session's history holds
 * at most 4 MiB (`DEFAULT_MAX_CONVERSATION_BYTES`) anyway, and an agent may stream any amount
 * (every chunk still reaches the clients as an update).
 */
export const MAX_TURN_TEXT_CHARS = 4 * 1024 * 1024;

/** Finds the session an agent's message names by the agent's session id. */
export type LinkLookup = (agentSessionId: unknown) => SessionLink | undefined;

function paramsObject(params: unknown): Record<string, unknown> {
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw new RpcError(RPC_ERROR.invalidParams, 'params must be an object');
  return params as Record<string, unknown>;
}

function requireLink(lookup: LinkLookup, params: Record<string, unknown>): SessionLink {
  const link = lookup(params['sessionId']);
  if (link === undefined)
    throw new RpcError(RPC_ERROR.invalidParams, `unknown sessionId ${describeValue(params['sessionId'])}`);
  return link;
}

/**
 * Answers the agent's client-side requests: a permission question goes to the running turn's
 * clients (`cancelled` when no turn runs), file reads and writes are served inside the
 * session's workspace only, and anything else is `-32601` (terminals are not offered).
 */
export async function answerAgentRequest(lookup: LinkLookup, method: string, raw: unknown): Promise<unknown> {
  switch (method) {
    case 'session/request_permission': {
      const params = paramsObject(raw);
      const link = requireLink(lookup, params);
      const ask = link.turn?.requestPermission;
      if (ask === undefined) return { outcome: { outcome: 'cancelled' } };
      const request = {
        toolCall: (params['toolCall'] ?? {}) as PermissionRequest['toolCall'],
        options: (Array.isArray(params['options']) ? params['options'] : []) as PermissionRequest['options'],
      };
      return { outcome: await ask(request) };
    }
    case 'fs/read_text_file': {
      const params = paramsObject(raw);
      return readTextFile(requireLink(lookup, params).workspaceCwd, params);
    }
    case 'fs/write_text_file': {
      const params = paramsObject(raw);
      return writeTextFile(requireLink(lookup, params).workspaceCwd, params);
    }
    default:
      throw new RpcError(RPC_ERROR.methodNotFound, `Method not found: ${describeValue(method)}`);
  }
}

/**
 * Relays a `session/update` notification as the agent sent it, less qwen's skill texts
 * ({@link dropSkillDetails}): into the running turn (whose answer text it accumulates), or,
 * outside a turn, onto the session's stream as a `session_update` without a prompt id. Updates
 * of a `session/load` replay are dropped (the session's clients have that history already); an
 * adopted spare's wait in `link.held`; one naming no session goes to `unclaimed` (a spare agent
 * session's, docs/decisions/030). `lineBytes` is the size of the agent's line; a held update
 * counts that against its bound, or its own size once the skill texts are gone.
 */
export function relayNotification(
  lookup: LinkLookup,
  host: AgentHost | undefined,
  method: string,
  raw: unknown,
  lineBytes: number,
  unclaimed?: (agentSessionId: unknown, update: SessionUpdate, bytes: number) => void,
): void {
  if (method !== 'session/update' || typeof raw !== 'object' || raw === null) return;
  const params = raw as Record<string, unknown>;
  const update = params['update'] as SessionUpdate | undefined;
  if (typeof update !== 'object' || update === null || typeof update.sessionUpdate !== 'string') return;
  const bytes = dropSkillDetails(update) ? JSON.stringify(update).length : lineBytes;
  const link = lookup(params['sessionId']);
  if (link === undefined) {
    unclaimed?.(params['sessionId'], update, bytes);
    return;
  }
  if (link.loading) return;
  if (link.held !== undefined) {
    link.held.add(update, bytes);
    return;
  }
  const turn = link.turn;
  if (turn === undefined) {
    host?.publish(link.sessionId, { type: 'session_update', data: { sessionId: link.sessionId, update } });
    return;
  }
  if (update.sessionUpdate === 'agent_message_chunk') {
    const content = update['content'] as { type?: unknown; text?: unknown } | undefined;
    if (
      content?.type === 'text' &&
      typeof content.text === 'string' &&
      turn.text.length < MAX_TURN_TEXT_CHARS
    )
      turn.text += content.text.slice(0, MAX_TURN_TEXT_CHARS - turn.text.length);
  }
  turn.emit(update);
}
