import { daemonVersion } from '../../version.js';
import type { ModelCatalogue } from '@sluice/runtime';
import { defineRoute, type Route, type RouteParts } from '../route.js';
import { Capabilities, Health, SchedulerSnapshot } from '../schemas/discovery-schemas.js';

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

/** The model limits of a default daemon, as `/capabilities` and `/runtime/snapshot` show them. */
const LIMITS_EXAMPLE = {
  maxConcurrency: 4,
  maxQueued: 32,
  maxInflight: 64,
  maxRequestBytes: 8388608,
  defaultTimeoutMs: 600000,
};

/** `/capabilities` of a default daemon with the echo provider. */
const CAPABILITIES_EXAMPLE = {
  v: 1,
  protocolVersions: { current: 'v1', supported: ['v1'] },
  mode: 'http-bridge',
  features: [...FEATURES],
  workspaceCwd: '/srv/project',
  transports: [...TRANSPORTS],
  policy: { permission: 'first-responder' },
  limits: {
    maxPendingPromptsPerSession: 5,
    maxSessionsPerWorkspace: 32,
    maxSessions: 128,
    promptDeadlineMs: null,
    model: LIMITS_EXAMPLE,
  },
  runtime: { provider: 'echo', model: 'echo-1' },
  version: '0.1.0',
};

/** `GET /health`, `GET /capabilities`, `GET /runtime/snapshot` (PROTOCOL §3). */
export const DISCOVERY_ROUTES: readonly Route[] = [
  defineRoute(
    {
      method: 'GET',
      path: '/health',
      tag: 'discovery',
      summary: 'Liveness',
      description:
        'Answers while the daemon serves, draining included; for probes and load balancers. Open on a loopback bind unless `--require-auth`, never rate limited.',
      openOnLoopback: true,
      rateLimit: 'exempt',
      responses: { 200: { description: 'Serving.', schema: Health, example: { status: 'ok' } } },
    },
    { handler: () => async () => ({ status: 'ok' }) },
  ),
  defineRoute(
    {
      method: 'GET',
      path: '/capabilities',
      tag: 'discovery',
      summary: 'What this daemon implements, its transports and limits',
      description:
        'The feature tags, transports (`rest`, `acp-http`), the served workspace, the admission limits, the model runtime and the version (PROTOCOL §3). Clients read it before they rely on a feature.',
      responses: {
        200: { description: 'The capabilities.', schema: Capabilities, example: CAPABILITIES_EXAMPLE },
      },
    },
    { handler: (parts) => async () => capabilities(parts) },
  ),
  defineRoute(
    {
      method: 'GET',
      path: '/runtime/snapshot',
      tag: 'discovery',
      summary: "The model scheduler's state, live (the default model's; each model's under `models`)",
      description:
        'Whether it accepts calls, how many are in flight, queued and waiting, in which phase, and its limits; with agent processes, their sessions and memory under `agents`.',
      responses: {
        200: {
          description: 'The snapshot.',
          schema: SchedulerSnapshot,
          example: {
            accepting: true,
            inflight: 1,
            queued: 0,
            waiting: 0,
            maxWaiting: 256,
            preparing: 0,
            executing: 1,
            cleaning: 0,
            limits: LIMITS_EXAMPLE,
            jobs: [],
          },
        },
      },
    },
    {
      // Beside the scheduler, the agent processes (sessions, RSS of each tree, the memory budget),
      // and with more than one model each model's own scheduler (issue 29).
      handler:
        ({ runtime, models, agents }) =>
        async () => {
          const report = agents?.();
          const snapshot =
            models.models.length > 1
              ? { ...runtime.schedulerSnapshot(), models: modelSnapshots(models) }
              : runtime.schedulerSnapshot();
          return report === undefined ? snapshot : { ...snapshot, agents: report };
        },
    },
  ),
];

/** Each model's name, provider and scheduler snapshot, in catalogue order. */
function modelSnapshots(models: ModelCatalogue): Array<Record<string, unknown>> {
  return models.models.map((model) => ({
    model: model.name,
    provider: model.runtime.providerName,
    ...model.runtime.schedulerSnapshot(),
  }));
}

function capabilities({ sessions, runtime, workspace, rateLimit }: RouteParts): Record<string, unknown> {
  const limits = sessions.limits;
  const features: string[] = [...FEATURES];
  if (limits.promptDeadlineMs !== null) features.push('prompt_absolute_deadline');
  // The reference's tag for `--rate-limit`; the limits are listed under `limits.rateLimit`.
  if (rateLimit !== undefined) features.push('rate_limit');
  return {
    v: 1,
    protocolVersions: { current: 'v1', supported: ['v1'] },
    mode: 'http-bridge',
    features,
    workspaceCwd: workspace,
    transports: [...TRANSPORTS],
    policy: { permission: 'first-responder' },
    limits: {
      maxPendingPromptsPerSession: limits.maxPendingPromptsPerSession,
      maxSessionsPerWorkspace: limits.maxSessionsPerWorkspace,
      maxSessions: limits.maxSessions,
      promptDeadlineMs: limits.promptDeadlineMs,
      model: { ...runtime.limits },
      ...(rateLimit === undefined
        ? {}
        : { rateLimit: { ...rateLimit.limits, windowMs: rateLimit.windowMs } }),
    },
    runtime: { provider: runtime.provider.name, model: runtime.provider.defaultModel },
    version: daemonVersion(),
  };
}
