import type * as acp from '@agentclientprotocol/sdk';
import { isAbsolute } from 'node:path';
import { InvalidCwdError } from '../sessions/index.js';
import {
  listSessionsParams,
  newSessionParams,
  restoreSessionParams,
  type ListSessionsParams,
  type NewSessionParams,
  type RestoreSessionParams,
} from './client-params.js';
import type { AcpHandler, AcpHandlerContext } from './handler-context.js';
import { forkParams } from './method-params.js';
import { listPage } from './session-list.js';

/** Registers the methods that open a session on the connection: new, load, resume, fork, list. */
export function registerSessionHandlers(app: acp.AgentApp, context: AcpHandlerContext): acp.AgentApp {
  return app
    .onRequest('session/new', newSessionParams, newSession(context))
    .onRequest('session/load', restoreSessionParams, restoreSession(context, 'load'))
    .onRequest('session/resume', restoreSessionParams, restoreSession(context, 'resume'))
    .onRequest(
      'session/list',
      listSessionsParams,
      context.guard('session/list', (params: ListSessionsParams) => listPage(context.bridge, params)),
    )
    .onRequest('session/fork', forkParams, forkSession(context));
}

function newSession(context: AcpHandlerContext): AcpHandler<NewSessionParams, acp.NewSessionResponse> {
  return context.guard('session/new', async (params: NewSessionParams): Promise<acp.NewSessionResponse> => {
    context.admitting();
    if (params.cwd !== undefined && !isAbsolute(params.cwd)) throw new InvalidCwdError(params.cwd);
    // openSession: an external agent prepares the session first (agent_unavailable); a
    // chosen id that is stored is refused as over REST.
    const handle = await context.bridge.openSession({
      ...(params.cwd === undefined ? {} : { cwd: params.cwd }),
      scope: 'thread',
      ...(params.sessionId === undefined ? {} : { sessionId: params.sessionId.toLowerCase() }),
    });
    context.host.attach(handle.sessionId, handle.clientId, false);
    return { sessionId: handle.sessionId };
  });
}

/** `session/load` (the connection also gets the history) and `session/resume`. */
function restoreSession(
  context: AcpHandlerContext,
  mode: 'load' | 'resume',
): AcpHandler<RestoreSessionParams, Record<string, never>> {
  return context.guard(
    `session/${mode}`,
    async (params: RestoreSessionParams): Promise<Record<string, never>> => {
      context.admitting();
      const cwd = params.cwd === undefined ? {} : { cwd: params.cwd };
      const handle = await context.bridge.restoreSession(params.sessionId, { mode, ...cwd });
      context.host.attach(handle.sessionId, handle.clientId, mode === 'load');
      return {};
    },
  );
}

function forkSession(
  context: AcpHandlerContext,
): AcpHandler<{ sessionId: string; name?: string }, { sessionId: string }> {
  return context.guard('session/fork', async (params: { sessionId: string; name?: string }) => {
    context.admitting();
    const branched = await context.bridge.branchSession(
      params.sessionId,
      params.name === undefined ? {} : { name: params.name },
    );
    context.host.attach(branched.sessionId, branched.clientId, false);
    return { sessionId: branched.sessionId };
  });
}
