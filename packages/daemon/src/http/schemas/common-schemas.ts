import { isAbsolute } from 'node:path';
import * as z from 'zod/mini';

/**
 * Shapes shared by several routes: the error envelope, path parameters, headers and the
 * fields every session answer carries. Descriptions are registered with zod's global registry,
 * from which `GET /openapi.json` takes them.
 */

/** `schema` with a description (and any JSON Schema keywords in `extra`) for the API document. */
export function documented<S extends z.ZodMiniType>(
  schema: S,
  description: string,
  extra: Record<string, unknown> = {},
): S {
  z.globalRegistry.add(schema as z.ZodMiniType, { description, ...extra });
  return schema;
}

/** The error envelope of PROTOCOL §1: a message, a stable code, and details that vary by code. */
export const ErrorBody = documented(
  z.looseObject({
    error: documented(z.string(), 'What went wrong and what to fix.'),
    code: z.optional(documented(z.string(), 'Stable machine-readable code, e.g. `invalid_cwd`.')),
  }),
  'An error (PROTOCOL §1); some codes add details such as `sessionId`, `limit` or `pendingCount`.',
);

/** An OpenAI-shaped error, as the model gateway (`/v1/*`) answers. */
export const OpenAIErrorBody = documented(
  z.looseObject({
    error: z.looseObject({
      message: z.string(),
      type: z.string(),
      param: z.optional(z.nullable(z.string())),
      code: z.optional(z.nullable(z.string())),
    }),
  }),
  "An error in OpenAI's shape; an upstream provider's error is passed through as it came.",
);

/** `:id` of every session route. */
export const SessionIdParams = z.object({ id: documented(z.string(), 'The session id (a UUID).') });

/** An absolute filesystem path (a relative one is `invalid_cwd`). */
export function absolutePath(description: string): z.ZodMiniString {
  return documented(z.string().check(z.refine((path) => isAbsolute(path))), description);
}

/** The `X-Qwen-Client-Id` header (PROTOCOL §1), validated by `clientIdOf`. */
export const ClientIdHeader = documented(
  z.string().check(z.regex(/^[A-Za-z0-9._:-]{1,128}$/)),
  "The caller's client identity; on session routes it must be registered on that session.",
);

/** An ISO 8601 timestamp as the wire carries session times. */
export const WireTime = z.iso.datetime();

/** Where a session's event stream stands: what a client replays from. */
export const StreamPosition = {
  lastEventId: documented(z.int(), 'Id of the last event published on the session stream.'),
  eventEpoch: documented(z.string(), 'Epoch of the stream; a replay across epochs resynchronizes.'),
};

/** `POST /session` and `POST /session/:id/branch` answers: the session a client is now attached to. */
export const SessionHandleShape = {
  sessionId: z.string(),
  workspaceCwd: z.string(),
  attached: documented(z.boolean(), 'True when the call joined an existing session.'),
  clientId: documented(z.string(), 'The client identity this call registered on the session.'),
  createdAt: WireTime,
};

/** An empty JSON object (`{}`), the answer of a vote. */
export const EmptyObject = z.object({});
