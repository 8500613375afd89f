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

const schedulerFields = {
  accepting: z.boolean(),
  inflight: count,
  queued: count,
  preparing: count,
  executing: count,
  cleaning: count,
  limits: z.record(z.string(), z.number()),
  jobs: documented(z.array(z.looseObject({})), 'One entry per admitted call: its phase and times.'),
};

/** `GET /runtime/snapshot`: the model scheduler, live (SCH); each model's with a catalogue. */
export const SchedulerSnapshot = z.looseObject({
  ...schedulerFields,
  totalSlots: documented(
    z.optional(z.object({ used: count, limit: count })),
    "With `--model-max-concurrency-total`: the slots all models' calls hold together, and the cap (docs/decisions/037).",
  ),
  models: documented(
    z.optional(z.array(z.looseObject({ model: z.string(), provider: z.string(), ...schedulerFields }))),
    "With more than one model (docs/models.md): each model's own scheduler, by name; the top level is the default model's.",
  ),
});
