import { RequestError } from '@agentclientprotocol/sdk';
import { clipText } from '@sluice/protocol';
import { clipStrings, mapError } from '../wire/index.js';

/** JSON-RPC error codes the ACP transports answer with (PROTOCOL §8). */
export const RPC_CODE = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  resourceNotFound: -32002,
} as const;

const CODE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

function ownCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && CODE_PATTERN.test(code) ? code : undefined;
}

/**
 * Turns anything a handler threw into a JSON-RPC error whose `data.errorKind` is the error's
 * stable code (SPEC BP-10). The HTTP error table ({@link mapError}) is the one source of truth:
 * its status picks the JSON-RPC code (`404` → `-32002`, `400` → `-32602`, else `-32603`), its
 * body becomes `data` with `httpStatus` added. So `PromptQueueFullError` becomes
 * `{code:-32603, data:{errorKind:'prompt_queue_full', sessionId, limit, pendingCount, httpStatus:503}}`.
 * Errors the table does not know but that carry their own `code` (the model runtime's) keep it
 * as `errorKind`; anything else is `errorKind: 'internal'` and reveals no internals.
 */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  const mapped = mapError(error);
  const { error: message, code, ...details } = mapped.body;
  if (typeof code === 'string') {
    const rpcCode =
      mapped.statusCode === 404
        ? RPC_CODE.resourceNotFound
        : mapped.statusCode === 400
          ? RPC_CODE.invalidParams
          : RPC_CODE.internalError;
    return new RequestError(rpcCode, String(message), {
      errorKind: code,
      ...details,
      httpStatus: mapped.statusCode,
    });
  }
  const kind = ownCode(error);
  if (kind !== undefined && error instanceof Error) {
    const data: Record<string, unknown> = { errorKind: kind };
    const errorKind = (error as { errorKind?: unknown }).errorKind;
    if (typeof errorKind === 'string' && CODE_PATTERN.test(errorKind)) data['detail'] = errorKind;
    return new RequestError(RPC_CODE.internalError, error.message, data);
  }
  return new RequestError(RPC_CODE.internalError, 'Internal error', { errorKind: 'internal' });
}

/**
 * `message` with no more than 200 characters of any client value in its error (issue 28): the
 * SDK's own refusals quote what was sent (`"Method not found": <the whole method>`, with the
 * method again in `data`). Every answer of an ACP connection, stdio or HTTP, passes here.
 */
export function withoutEchoes<M>(message: M): M {
  const error = (message as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return message;
  const { code, data } = error as { code?: unknown; data?: unknown };
  const clipped: Record<string, unknown> = { ...(error as Record<string, unknown>) };
  const method = (data as { method?: unknown } | undefined)?.method;
  if (code === RPC_CODE.methodNotFound && typeof method === 'string')
    clipped['message'] = `"Method not found": ${clipText(method)}`;
  if (typeof data === 'object' && data !== null && !Array.isArray(data))
    clipped['data'] = clipStrings(data as Record<string, unknown>);
  return { ...message, error: clipped };
}

/** Whether `toRequestError` hid the cause: the operator should see it in the log. */
export function isUntypedFailure(error: RequestError): boolean {
  const data = error.data as { errorKind?: unknown } | undefined;
  return data?.errorKind === 'internal';
}
