import * as acp from '@agentclientprotocol/sdk';

/**
 * Params parsers for requests the official `@qwen-code/sdk` ACP-over-HTTP client sends in a
 * shape the ACP schema refuses or strips (PROTOCOL §8; the reference daemon accepts them):
 * `session/new`, `session/load` and `session/resume` without `mcpServers` (a
 * caller-chosen id under `_meta`), `session/list`
 * naming the workspace `workspaceCwd` with its page size under `_meta.size`, and the vendor
 * `session/permission` vote. They only check the JSON shape (`-32602`); the handlers validate
 * values and throw the daemon's typed errors, so those keep their `data.errorKind`.
 */

/** `_meta` key under which the official client sends a caller-chosen session id. */
export const REQUESTED_SESSION_ID_META_KEY = 'qwen-code/sessionId';

/** `session/new` as this daemon reads it. */
export interface NewSessionParams {
  cwd?: string;
  sessionId?: string;
}

/** `session/load` and `session/resume` as this daemon reads them. */
export interface RestoreSessionParams {
  sessionId: string;
  cwd?: string;
}

/** `session/list` as this daemon reads it. */
export interface ListSessionsParams {
  cwd?: string;
  cursor?: string;
  size?: number;
}

/** `session/permission`: a vote on an open permission request, by its broker id. */
export interface PermissionVoteParams {
  requestId: string;
  outcome: unknown;
  sessionId?: string;
}

function record(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw acp.RequestError.invalidParams({ params: 'must be an object' });
  return raw as Record<string, unknown>;
}

function optionalString(params: Record<string, unknown>, key: string): string | undefined {
  const value = params[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw acp.RequestError.invalidParams({ [key]: 'must be a string' });
  return value;
}

function meta(params: Record<string, unknown>): Record<string, unknown> {
  const value = params['_meta'];
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** `cwd` (absolute path, checked by the handler), `mcpServers` ignored, `_meta["qwen-code/sessionId"]`. */
export const newSessionParams = {
  parse(raw: unknown): NewSessionParams {
    const params = record(raw);
    const cwd = optionalString(params, 'cwd');
    const sessionId = optionalString(meta(params), REQUESTED_SESSION_ID_META_KEY);
    return { ...(cwd === undefined ? {} : { cwd }), ...(sessionId === undefined ? {} : { sessionId }) };
  },
};

/** `sessionId` and `cwd` (checked against the session's workspace); `mcpServers` ignored. */
export const restoreSessionParams = {
  parse(raw: unknown): RestoreSessionParams {
    const params = record(raw);
    const sessionId = optionalString(params, 'sessionId');
    if (sessionId === undefined || sessionId.length === 0)
      throw acp.RequestError.invalidParams({ sessionId: 'must be a non-empty string' });
    const cwd = optionalString(params, 'cwd');
    return { sessionId, ...(cwd === undefined ? {} : { cwd }) };
  },
};

/** `cwd` or the official client's `workspaceCwd`, `cursor`, and `_meta.size`. */
export const listSessionsParams = {
  parse(raw: unknown): ListSessionsParams {
    const params = record(raw);
    const cwd = optionalString(params, 'cwd') ?? optionalString(params, 'workspaceCwd');
    const cursor = optionalString(params, 'cursor');
    const size = meta(params)['size'];
    if (size !== undefined && typeof size !== 'number')
      throw acp.RequestError.invalidParams({ size: 'must be a number' });
    return {
      ...(cwd === undefined ? {} : { cwd }),
      ...(cursor === undefined ? {} : { cursor }),
      ...(size === undefined ? {} : { size }),
    };
  },
};

/** `{requestId, outcome, sessionId?}`; the broker checks `outcome` itself. */
export const permissionVoteParams = {
  parse(raw: unknown): PermissionVoteParams {
    const params = record(raw);
    const requestId = optionalString(params, 'requestId');
    if (requestId === undefined || requestId.length === 0)
      throw acp.RequestError.invalidParams({ requestId: 'must be a non-empty string' });
    const sessionId = optionalString(params, 'sessionId');
    return {
      requestId,
      outcome: params['outcome'],
      ...(sessionId === undefined || sessionId.length === 0 ? {} : { sessionId }),
    };
  },
};
