import type { AnyMessage } from '@agentclientprotocol/sdk';
import type { EventFrame } from '../events/index.js';

/** ACP's notification that withdraws a request the other side has not answered yet. */
export const ACP_CANCEL_REQUEST = '$/cancel_request';

/** Permission requests one connection remembers having asked; beyond this the oldest is forgotten. */
const MAX_ASKED = 1024;

/** Vendor notification carrying every session event ACP has no method for (PROTOCOL §8). */
export const QWEN_NOTIFY = '_qwen/notify';

/**
 * One session event as the JSON-RPC message an ACP client reads (PROTOCOL §8):
 * `session_update` → `session/update` notification; an open `permission_request` →
 * `session/request_permission` request whose id is the broker's `requestId` (the client's
 * response is the vote); anything else — a resolved permission request replayed later, the
 * turn events, the synthetic frames — → `_qwen/notify {kind, data}`.
 */
export function eventToAcpMessage(
  frame: EventFrame,
  isOpenPermission: (requestId: string) => boolean,
  data = frame.envelope.data as Record<string, unknown> | null,
): AnyMessage {
  const { type } = frame;
  if (type === 'session_update' && data !== null)
    return { jsonrpc: '2.0', method: 'session/update', params: data };
  if (type === 'permission_request' && data !== null && typeof data['requestId'] === 'string') {
    const requestId = data['requestId'];
    if (isOpenPermission(requestId))
      return {
        jsonrpc: '2.0',
        id: requestId,
        method: 'session/request_permission',
        params: {
          sessionId: data['sessionId'],
          toolCall: data['toolCall'],
          options: data['options'],
          // Where the reference daemon's clients look for the broker's id.
          _meta: { qwen: { requestId } },
        },
      };
  }
  return { jsonrpc: '2.0', method: QWEN_NOTIFY, params: { kind: type, data } };
}

/**
 * Session events as ACP messages for one connection (see {@link eventToAcpMessage}). It remembers
 * which permission requests it handed to this client as open `session/request_permission`
 * requests, so that one resolved elsewhere — another client's vote, the timeout, the turn's end —
 * is withdrawn with `$/cancel_request` (ACP cancellation) after its `permission_resolved`
 * notification: the client can close its dialog. A client that answered is not told.
 */
export class AcpEventTranslator {
  private readonly asked = new Set<string>();

  constructor(private readonly isOpenPermission: (requestId: string) => boolean) {}

  /** The frame's message, followed by a `$/cancel_request` when it withdraws a question asked here. */
  readonly translate = (frame: EventFrame): AnyMessage | readonly AnyMessage[] => {
    const data = frame.envelope.data as Record<string, unknown> | null;
    const message = eventToAcpMessage(frame, this.isOpenPermission, data);
    const requestId = data?.['requestId'];
    if (typeof requestId !== 'string') return message;
    if (frame.type === 'permission_request' && 'id' in message) this.remember(requestId);
    else if (frame.type === 'permission_resolved' && this.asked.delete(requestId))
      return [message, { jsonrpc: '2.0', method: ACP_CANCEL_REQUEST, params: { requestId } }];
    return message;
  };

  /** The client answered `requestId` (a vote or an error): nothing to withdraw from it. */
  answered(requestId: string): void {
    this.asked.delete(requestId);
  }

  private remember(requestId: string): void {
    this.asked.add(requestId);
    if (this.asked.size > MAX_ASKED) this.asked.delete(this.asked.values().next().value as string);
  }
}
