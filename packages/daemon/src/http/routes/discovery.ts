import type { FastifyInstance } from 'fastify';
import type { ModelRuntime } from '@sluice/runtime';
import type { SessionBridge } from '../../sessions/index.js';

/**
 * Features this daemon implements, exactly (PROTOCOL §3). `session_id_override` is the reference
 * tag for a caller-chosen `sessionId` on `POST /session` (§4); the official SDK refuses to send
 * one unless it is advertised.
 */
export const FEATURES = [
  'health',
  'capabilities',
  'session_create',
  'session_id_override',
  'session_scope_override',
  'session_prompt',
  'non_blocking_prompt',
  'session_events',
  'session_cancel',
  'session_status',
  'session_close',
  'session_branch',
  'session_permission_vote',
  'permission_vote',
  'client_identity',
  'client_heartbeat',
  'pending_prompts',
] as const;

/**
 * Transports this daemon serves (PROTOCOL §3): REST + SSE, and ACP over HTTP on `/acp`. The
 * official client's `negotiateTransport` picks `acp-http` from this list.
 */
export const TRANSPORTS = ['rest', 'acp-http'] as const;

/** `GET /health`, `GET /capabilities`, `GET /runtime/snapshot`. */
export function discoveryRoutes(
  app: FastifyInstance,
  sessions: SessionBridge,
  runtime: ModelRuntime,
  workspaceCwd: string,
  agents?: () => unknown,
): void {
  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/capabilities', async () => {
    const limits = sessions.limits;
    const features: string[] = [...FEATURES];
    if (limits.promptDeadlineMs !== null) features.push('prompt_absolute_deadline');
    return {
      v: 1,
      protocolVersions: { current: 'v1', supported: ['v1'] },
      mode: 'http-bridge',
      features,
      workspaceCwd,
      transports: [...TRANSPORTS],
      policy: { permission: 'first-responder' },
      limits: {
        maxPendingPromptsPerSession: limits.maxPendingPromptsPerSession,
        maxSessionsPerWorkspace: limits.maxSessionsPerWorkspace,
        maxSessions: limits.maxSessions,
        promptDeadlineMs: limits.promptDeadlineMs,
        model: { ...runtime.limits },
      },
      runtime: { provider: runtime.provider.name, model: runtime.provider.defaultModel },
    };
  });

  // issue 27: the agent processes (sessions, RSS of each tree, the memory budget) beside the scheduler
  app.get('/runtime/snapshot', async () => {
    const report = agents?.();
    return report === undefined
      ? runtime.schedulerSnapshot()
      : { ...runtime.schedulerSnapshot(), agents: report };
  });
}
