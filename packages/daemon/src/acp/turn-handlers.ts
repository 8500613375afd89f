import type * as acp from '@agentclientprotocol/sdk';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { ContentBlock } from '../sessions/index.js';
import { permissionVoteParams, type PermissionVoteParams } from './client-params.js';
import type { AcpHandler, AcpHandlerContext } from './handler-context.js';
import { sessionParams } from './method-params.js';

/** Vendor method the official client maps `POST /session/:id/heartbeat` to. */
export const QWEN_HEARTBEAT = '_qwen/session/heartbeat';

/** Registers the methods used inside an open session: prompt, cancel, vote, heartbeat, close. */
export function registerTurnHandlers(app: acp.AgentApp, context: AcpHandlerContext): acp.AgentApp {
  const { bridge, host } = context;
  return app
    .onRequest('session/prompt', prompt(context))
    .onNotification('session/cancel', async ({ params }) => {
      try {
        bridge.cancel(params.sessionId);
      } catch (error) {
        host.log(error, 'acp session/cancel');
      }
    })
    .onRequest('session/close', closeSession(context))
    .onRequest('session/permission', permissionVoteParams, vote(context))
    .onRequest(
      QWEN_HEARTBEAT,
      sessionParams,
      context.guard(QWEN_HEARTBEAT, (params: { sessionId: string }) =>
        bridge.heartbeat(params.sessionId, host.clientIdFor(params.sessionId)),
      ),
    );
}

/** `session/prompt`, answered when the turn ends. */
function prompt(context: AcpHandlerContext): AcpHandler<acp.PromptRequest, acp.PromptResponse> {
  return context.guard(
    'session/prompt',
    async (params: acp.PromptRequest, signal): Promise<acp.PromptResponse> => {
      context.admitting();
      // Synchronous admission (SPEC BP-6): a full queue throws PromptQueueFullError right here.
      const admission = context.bridge.sendPrompt(
        params.sessionId,
        params.prompt as unknown as ContentBlock[],
        {
          ...context.stamp(params.sessionId),
          signal,
        },
      );
      const result = await admission.done;
      // Let the session's stream take the turn's last events before the answer is written.
      await nextMacrotask();
      return { stopReason: result.stopReason as acp.StopReason };
    },
  );
}

function closeSession(
  context: AcpHandlerContext,
): AcpHandler<acp.CloseSessionRequest, acp.CloseSessionResponse> {
  return context.guard('session/close', (params: acp.CloseSessionRequest): acp.CloseSessionResponse => {
    const { clientId } = context.stamp(params.sessionId);
    void context.bridge
      .closeSession(params.sessionId, {
        reason: 'client_close',
        ...(clientId === undefined ? {} : { clientId }),
      })
      .catch((error: unknown) => context.host.log(error, 'acp session/close'));
    context.host.detach(params.sessionId);
    return {};
  });
}

/** The official client's vote (PROTOCOL §7 over ACP): first responder wins, as over REST. */
function vote(context: AcpHandlerContext): AcpHandler<PermissionVoteParams, Record<string, never>> {
  const { permissions } = context.daemon;
  return context.guard('session/permission', (params: PermissionVoteParams): Record<string, never> => {
    const sessionId = params.sessionId ?? permissions.sessionOf(params.requestId);
    const clientId = sessionId === undefined ? undefined : context.host.clientIdFor(sessionId);
    permissions.vote(params.requestId, params.outcome, {
      ...(params.sessionId === undefined ? {} : { sessionId: params.sessionId }),
      ...(clientId === undefined ? {} : { clientId }),
    });
    return {};
  });
}
