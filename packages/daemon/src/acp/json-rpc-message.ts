import type { AnyMessage, JsonRpcId } from '@agentclientprotocol/sdk';

function isId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** A JSON-RPC 2.0 error response (what both transports answer with when no handler can). */
export function rpcErrorResponse(
  id: JsonRpcId,
  code: number,
  message: string,
  data?: Record<string, unknown>,
) {
  return { jsonrpc: '2.0' as const, id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** The id of an object that may be a malformed request, for its error response; else `null`. */
export function idOf(value: unknown): JsonRpcId {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return isId(id) ? id : null;
}

/**
 * `value` as one JSON-RPC 2.0 message — request, notification or response — or `undefined`
 * when it is none of them (the caller answers `-32600`).
 */
export function asJsonRpcMessage(value: unknown): AnyMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (record['jsonrpc'] !== '2.0') return undefined;
  if ('method' in record) {
    if (typeof record['method'] !== 'string' || record['method'].length === 0) return undefined;
    if ('id' in record && !isId(record['id'])) return undefined;
    return record as unknown as AnyMessage;
  }
  if (!isId(record['id'])) return undefined;
  if ('result' in record === 'error' in record) return undefined;
  return record as unknown as AnyMessage;
}
