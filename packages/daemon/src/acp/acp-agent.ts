import { CodedError, describeValue } from '@sluice/protocol';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import * as acp from '@agentclientprotocol/sdk';
import type { AcpDaemon } from './acp-daemon.js';
import { isAbsolute } from 'node:path';
import {
  DaemonDrainingError,
  InvalidCwdError,
  WorkspaceMismatchError,
  type ContentBlock,
} from '../sessions/index.js';
import { unsupportedSetting } from './errors.js';
import {
  listSessionsParams,
  newSessionParams,
  permissionVoteParams,
  restoreSessionParams,
  type ListSessionsParams,
  type RestoreSessionParams,
  type NewSessionParams,
  type PermissionVoteParams,
} from './client-params.js';
import { isUntypedFailure, toRequestError } from './rpc-errors.js';

/** The ACP protocol version this daemon speaks (stable v1). */
export const ACP_PROTOCOL_VERSION = acp.PROTOCOL_VERSION;
/** Sessions per `session/list` page. */
export const ACP_LIST_PAGE_SIZE = 50;

/** What the agent handlers need from the transport that carries one ACP connection. */
export interface AcpSessionHost {
  /** The connection created or attached `sessionId`; `replay` = also deliver its history. */
  attach(sessionId: string, clientId: string, replay: boolean): void;
  /** The connection closed `sessionId`. */
  detach(sessionId: string): void;
  /** The client id the daemon stamped for this connection on the session, if it attached it. */
  clientIdFor(sessionId: string): string | undefined;
  /** Failures the client only sees as `errorKind: 'internal'`. */
  log(error: unknown, context: string): void;
}

/** Vendor method the official client maps `POST /session/:id/heartbeat` to. */
export const QWEN_HEARTBEAT = '_qwen/session/heartbeat';

const sessionParams = {
  parse(raw: unknown): { sessionId: string } {
    const sessionId = (raw as { sessionId?: unknown } | null)?.sessionId;
    if (typeof sessionId !== 'string' || sessionId.length === 0)
      throw acp.RequestError.invalidParams({ sessionId: 'must be a non-empty string' });
    return { sessionId };
  },
};

/** `session/fork`: the session, and the new one's display name (the official client sends `name`). */
const forkParams = {
  parse(raw: unknown): { sessionId: string; name?: string } {
    const { sessionId } = sessionParams.parse(raw);
    const name = (raw as { name?: unknown }).name;
    if (name !== undefined && name !== null && typeof name !== 'string')
      throw acp.RequestError.invalidParams({ name: 'must be a string' });
    return typeof name === 'string' ? { sessionId, name } : { sessionId };
  },
};

const setModelParams = {
  parse(raw: unknown): { sessionId: string; modelId: string } {
    const { sessionId, modelId } = (raw ?? {}) as { sessionId?: unknown; modelId?: unknown };
    if (typeof sessionId !== 'string' || typeof modelId !== 'string')
      throw acp.RequestError.invalidParams({ sessionId: 'string', modelId: 'string' });
    return { sessionId, modelId };
  },
};

/**
 * One `session/list` page of live sessions: ACP's `SessionInfo` fields plus the REST summary's
 * (`workspaceCwd`, `createdAt`, `clientCount`, `hasActivePrompt`), which the official client's
 * `listWorkspaceSessions` hands its caller as it does a REST page.
 */
/**
 * One page of the workspace's sessions, live and stored, as REST lists them (issue 19 item 16):
 * after a restart a client finds the sessions it can load. The cursor is REST's.
 */
async function listPage(
  bridge: AcpDaemon['bridge'],
  params: ListSessionsParams,
): Promise<acp.ListSessionsResponse> {
  const size = params.size === undefined ? ACP_LIST_PAGE_SIZE : pageSize(params.size);
  const cursor = params.cursor ?? undefined;
  let page: Awaited<ReturnType<AcpDaemon['bridge']['listWorkspaceSessions']>>;
  try {
    page = await bridge.listWorkspaceSessions(params.cwd, {
      size,
      ...(cursor === undefined || cursor === '' ? {} : { cursor }),
    });
  } catch (error) {
    // A workspace this daemon does not serve has no sessions here.
    if (error instanceof WorkspaceMismatchError) return { sessions: [] };
    throw error;
  }
  return {
    sessions: page.sessions.map((summary) => ({
      sessionId: summary.sessionId,
      cwd: summary.cwd,
      updatedAt: new Date(summary.updatedAt).toISOString(),
      ...(summary.displayName === undefined ? {} : { title: summary.displayName }),
      workspaceCwd: summary.workspaceCwd,
      createdAt: new Date(summary.createdAt).toISOString(),
      clientCount: summary.clientCount,
      hasActivePrompt: summary.hasActivePrompt,
    })),
    ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
  };
}

function cwdOf(params: { cwd?: string }): { cwd?: string } {
  return params.cwd === undefined ? {} : { cwd: params.cwd };
}

function pageSize(size: number): number {
  if (Number.isSafeInteger(size) && size >= 1) return Math.min(size, ACP_LIST_PAGE_SIZE);
  throw new CodedError('invalid_size', `size must be a positive integer, got ${String(size)}`);
}

/**
 * The daemon as an ACP agent (PROTOCOL §8): one `AgentApp` per ACP connection, its handlers
 * thin calls into the session bridge. Every error leaves through {@link toRequestError}, so a
 * typed daemon error keeps its `data.errorKind` (SPEC BP-10).
 */
// A table of one handler per ACP method, each a few lines: split, it would only scatter the table.
// eslint-disable-next-line max-lines-per-function
export function buildAcpAgent(daemon: AcpDaemon, host: AcpSessionHost): acp.AgentApp {
  const { bridge } = daemon;
  const guard = <P, R>(method: string, handler: (params: P, signal: AbortSignal) => Promise<R> | R) => {
    return async ({ params, signal }: { params: P; signal: AbortSignal }): Promise<R> => {
      try {
        return await handler(params, signal);
      } catch (error) {
        const mapped = toRequestError(error);
        if (isUntypedFailure(mapped)) host.log(error, `acp ${method}`);
        throw mapped;
      }
    };
  };
  const admitting = (): void => {
    if (daemon.bridge.draining) throw new DaemonDrainingError();
  };
  const stamp = (sessionId: string): { clientId?: string } => {
    const clientId = host.clientIdFor(sessionId);
    return clientId === undefined ? {} : { clientId };
  };

  return acp
    .agent({ name: 'sluice' })
    .onRequest(
      'initialize',
      guard('initialize', (params: acp.InitializeRequest): acp.InitializeResponse => ({
        protocolVersion: Math.max(1, Math.min(params.protocolVersion, ACP_PROTOCOL_VERSION)),
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: false },
          mcpCapabilities: { http: false, sse: false },
          sessionCapabilities: { list: {}, resume: {}, close: {} },
        },
        agentInfo: { name: 'sluice', version: '0.1.0' },
        authMethods: [],
      })),
    )
    .onRequest(
      'session/new',
      newSessionParams,
      guard('session/new', async (params: NewSessionParams): Promise<acp.NewSessionResponse> => {
        admitting();
        if (params.cwd !== undefined && !isAbsolute(params.cwd)) throw new InvalidCwdError(params.cwd);
        // openSession: an external agent prepares the session first (agent_unavailable); a
        // chosen id that is stored is refused as over REST.
        const handle = await bridge.openSession({
          ...(params.cwd === undefined ? {} : { cwd: params.cwd }),
          scope: 'thread',
          ...(params.sessionId === undefined ? {} : { sessionId: params.sessionId.toLowerCase() }),
        });
        host.attach(handle.sessionId, handle.clientId, false);
        return { sessionId: handle.sessionId };
      }),
    )
    .onRequest(
      'session/load',
      restoreSessionParams,
      guard('session/load', async (params: RestoreSessionParams): Promise<acp.LoadSessionResponse> => {
        admitting();
        const handle = await bridge.restoreSession(params.sessionId, { mode: 'load', ...cwdOf(params) });
        host.attach(handle.sessionId, handle.clientId, true);
        return {};
      }),
    )
    .onRequest(
      'session/resume',
      restoreSessionParams,
      guard('session/resume', async (params: RestoreSessionParams): Promise<acp.ResumeSessionResponse> => {
        admitting();
        const handle = await bridge.restoreSession(params.sessionId, { mode: 'resume', ...cwdOf(params) });
        host.attach(handle.sessionId, handle.clientId, false);
        return {};
      }),
    )
    .onRequest(
      'session/list',
      listSessionsParams,
      guard('session/list', (params: ListSessionsParams) => listPage(bridge, params)),
    )
    .onRequest(
      'session/prompt',
      guard('session/prompt', async (params: acp.PromptRequest, signal): Promise<acp.PromptResponse> => {
        admitting();
        // Synchronous admission (SPEC BP-6): a full queue throws PromptQueueFullError right here.
        const admission = bridge.sendPrompt(params.sessionId, params.prompt as unknown as ContentBlock[], {
          ...stamp(params.sessionId),
          signal,
        });
        const result = await admission.done;
        // Let the session's stream take the turn's last events before the answer is written.
        await nextMacrotask();
        return { stopReason: result.stopReason as acp.StopReason };
      }),
    )
    .onNotification('session/cancel', async ({ params }) => {
      try {
        bridge.cancel(params.sessionId);
      } catch (error) {
        host.log(error, 'acp session/cancel');
      }
    })
    .onRequest(
      'session/close',
      guard('session/close', (params: acp.CloseSessionRequest): acp.CloseSessionResponse => {
        const { clientId } = stamp(params.sessionId);
        void bridge
          .closeSession(params.sessionId, {
            reason: 'client_close',
            ...(clientId === undefined ? {} : { clientId }),
          })
          .catch((error: unknown) => host.log(error, 'acp session/close'));
        host.detach(params.sessionId);
        return {};
      }),
    )
    .onRequest(
      'session/permission',
      permissionVoteParams,
      guard('session/permission', (params: PermissionVoteParams): Record<string, never> => {
        // The official client's vote (PROTOCOL §7 over ACP): first responder wins, as over REST.
        const sessionId = params.sessionId ?? daemon.permissions.sessionOf(params.requestId);
        const clientId = sessionId === undefined ? undefined : host.clientIdFor(sessionId);
        daemon.permissions.vote(params.requestId, params.outcome, {
          ...(params.sessionId === undefined ? {} : { sessionId: params.sessionId }),
          ...(clientId === undefined ? {} : { clientId }),
        });
        return {};
      }),
    )
    .onRequest(
      QWEN_HEARTBEAT,
      sessionParams,
      guard(QWEN_HEARTBEAT, (params: { sessionId: string }) =>
        bridge.heartbeat(params.sessionId, host.clientIdFor(params.sessionId)),
      ),
    )
    .onRequest(
      'session/fork',
      forkParams,
      guard('session/fork', async (params: { sessionId: string; name?: string }) => {
        admitting();
        const branched = await bridge.branchSession(
          params.sessionId,
          params.name === undefined ? {} : { name: params.name },
        );
        host.attach(branched.sessionId, branched.clientId, false);
        return { sessionId: branched.sessionId };
      }),
    )
    .onRequest(
      'session/set_mode',
      guard('session/set_mode', (params: acp.SetSessionModeRequest): acp.SetSessionModeResponse => {
        bridge.status(params.sessionId);
        throw unsupportedSetting('mode', params.modeId);
      }),
    )
    .onRequest(
      'session/set_config_option',
      guard(
        'session/set_config_option',
        (params: acp.SetSessionConfigOptionRequest): acp.SetSessionConfigOptionResponse => {
          bridge.status(params.sessionId);
          throw unsupportedSetting(`config option ${describeValue(params.configId)}`, params.value);
        },
      ),
    )
    .onRequest(
      'session/set_model',
      setModelParams,
      guard('session/set_model', (params: { sessionId: string; modelId: string }): Record<string, never> => {
        bridge.status(params.sessionId);
        // One model serves every session; naming it again is accepted, any other is not.
        if (params.modelId === daemon.runtime.provider.defaultModel) return {};
        throw unsupportedSetting('model', params.modelId);
      }),
    );
}
