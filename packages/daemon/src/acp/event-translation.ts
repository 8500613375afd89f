import type { AnyMessage } from '@agentclientprotocol/sdk';
import type { EventFrame } from '../events/index.js';

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
): AnyMessage {
  const { type } = frame;
  const data = frame.envelope.data as Record<string, unknown> | null;
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
