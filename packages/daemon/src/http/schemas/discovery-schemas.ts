import * as z from 'zod/mini';
import { documented } from './common-schemas.js';

/** `GET /health`. */
export const Health = z.object({ status: z.literal('ok') });

const limit = z.nullable(documented(z.int(), '`null` = unlimited.'));

/** `GET /capabilities` (PROTOCOL §3): what this daemon implements, and its limits. */
export const Capabilities = z.looseObject({
  v: z.literal(1),
  protocolVersions: z.looseObject({ current: z.string(), supported: z.array(z.string()) }),
  mode: z.literal('http-bridge'),
  features: documented(z.array(z.string()), 'Exactly the features implemented.'),
  workspaceCwd: documented(z.string(), 'The primary workspace.'),
  transports: z.array(z.enum(['rest', 'acp-http'])),
  policy: z.looseObject({ permission: z.literal('first-responder') }),
  limits: z.looseObject({
    maxPendingPromptsPerSession: limit,
    maxSessionsPerWorkspace: limit,
    maxSessions: limit,
    promptDeadlineMs: limit,
    model: documented(z.record(z.string(), z.number()), "The model scheduler's limits."),
  }),
  runtime: z.looseObject({ provider: z.string(), model: z.string() }),
  version: documented(z.string(), "Sluice's version, as `sluice --version` prints it."),
});

const count = z.int().check(z.nonnegative());

/** `GET /runtime/snapshot`: the model scheduler, live (SCH). */
export const SchedulerSnapshot = z.looseObject({
  accepting: z.boolean(),
  inflight: count,
  queued: count,
  preparing: count,
  executing: count,
  cleaning: count,
  limits: z.record(z.string(), z.number()),
  jobs: documented(z.array(z.looseObject({})), 'One entry per admitted call: its phase and times.'),
});
