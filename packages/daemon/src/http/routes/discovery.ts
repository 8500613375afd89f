import type { FastifyInstance } from 'fastify';
import type { Daemon } from '../../daemon.js';

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

/** `GET /health`, `GET /capabilities`, `GET /runtime/snapshot`. */
export function discoveryRoutes(app: FastifyInstance, daemon: Daemon): void {
  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/capabilities', async () => {
    const limits = daemon.bridge.limits;
    const features: string[] = [...FEATURES];
    if (limits.promptDeadlineMs !== null) features.push('prompt_absolute_deadline');
    return {
      v: 1,
      protocolVersions: { current: 'v1', supported: ['v1'] },
      mode: 'http-bridge',
      features,
      workspaceCwd: daemon.config.workspace,
      transports: ['rest'],
      policy: { permission: 'first-responder' },
      limits: {
        maxPendingPromptsPerSession: limits.maxPendingPromptsPerSession,
        maxSessionsPerWorkspace: limits.maxSessionsPerWorkspace,
        maxSessions: limits.maxSessions,
        promptDeadlineMs: limits.promptDeadlineMs,
        model: { ...daemon.runtime.limits },
      },
      runtime: { provider: daemon.runtime.provider.name, model: daemon.runtime.provider.defaultModel },
    };
  });

  app.get('/runtime/snapshot', async () => daemon.runtime.schedulerSnapshot());
}
