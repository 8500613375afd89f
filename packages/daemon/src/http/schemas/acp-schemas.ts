import * as z from 'zod/mini';
import { documented } from './common-schemas.js';

/**
 * One JSON-RPC 2.0 message of ACP over HTTP (PROTOCOL §8). The ACP layer reads it itself: it
 * answers a malformed one with a JSON-RPC error (`-32700`, `-32600`), not a REST error body.
 */
export const JsonRpcMessage = documented(
  z.looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.optional(z.nullable(z.union([z.string(), z.number()]))),
    method: z.optional(z.string()),
    params: z.optional(z.unknown()),
    result: z.optional(z.unknown()),
    error: z.optional(z.looseObject({ code: z.int(), message: z.string(), data: z.optional(z.unknown()) })),
  }),
  'A JSON-RPC 2.0 request, notification or response (one message; a batch is `501`).',
);

/** `Acp-Connection-Id`: the connection `initialize` opened. */
export const AcpConnectionIdHeader = documented(
  z.string(),
  'The connection that `initialize` answered with; required on every other request.',
);

/** `Acp-Session-Id`: with `GET /acp`, also stream this session. */
export const AcpSessionIdHeader = documented(z.string(), 'A session whose updates this stream carries too.');
