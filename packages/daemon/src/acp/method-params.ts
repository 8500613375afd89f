import * as acp from '@agentclientprotocol/sdk';

/**
 * Params parsers of the ACP methods whose schema the daemon reads itself: they check the JSON
 * shape only (`-32602`); the handlers validate the values.
 */

/** `{sessionId}`, a non-empty string (the vendor heartbeat). */
export const sessionParams = {
  parse(raw: unknown): { sessionId: string } {
    const sessionId = (raw as { sessionId?: unknown } | null)?.sessionId;
    if (typeof sessionId !== 'string' || sessionId.length === 0)
      throw acp.RequestError.invalidParams({ sessionId: 'must be a non-empty string' });
    return { sessionId };
  },
};

/** `session/fork`: the session, and the new one's display name (the official client sends `name`). */
export const forkParams = {
  parse(raw: unknown): { sessionId: string; name?: string } {
    const { sessionId } = sessionParams.parse(raw);
    const name = (raw as { name?: unknown }).name;
    if (name !== undefined && name !== null && typeof name !== 'string')
      throw acp.RequestError.invalidParams({ name: 'must be a string' });
    return typeof name === 'string' ? { sessionId, name } : { sessionId };
  },
};

/** `session/set_model`: `{sessionId, modelId}`, both strings. */
export const setModelParams = {
  parse(raw: unknown): { sessionId: string; modelId: string } {
    const { sessionId, modelId } = (raw ?? {}) as { sessionId?: unknown; modelId?: unknown };
    if (typeof sessionId !== 'string' || typeof modelId !== 'string')
      throw acp.RequestError.invalidParams({ sessionId: 'string', modelId: 'string' });
    return { sessionId, modelId };
  },
};
