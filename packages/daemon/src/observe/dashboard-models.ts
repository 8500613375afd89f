import type { ModelLimits, TotalSlotsReport } from '@sluice/protocol';
import type { ObservedDaemon } from './observed-daemon.js';

/** One catalogue model as the dashboard shows it: its scheduler's counts, limits and refusals. */
export interface ModelLoad {
  model: string;
  accepting: boolean;
  /** Calls holding one of its slots (preparing or executing). */
  slots: number;
  queued: number;
  /** Calls of accepted prompts waiting for room (docs/decisions/029). */
  waiting: number;
  inflight: number;
  limits: Pick<ModelLimits, 'maxConcurrency' | 'maxQueued' | 'maxInflight'>;
  /** Its calls refused at admission since start. */
  refusals: number;
}

/** Each model of the catalogue, in its order, and the daemon-wide cap over their slots (null: none). */
export function modelLoads(source: ObservedDaemon): {
  models: ModelLoad[];
  totalSlots: TotalSlotsReport | null;
} {
  const snapshots = source.models?.snapshots() ?? [];
  const refusals = source.tap.model.refusalsByModel;
  const models = snapshots.map(({ model, snapshot }) => {
    const { maxConcurrency, maxQueued, maxInflight } = snapshot.limits;
    return {
      model,
      accepting: snapshot.accepting,
      slots: snapshot.preparing + snapshot.executing,
      queued: snapshot.queued,
      waiting: snapshot.waiting,
      inflight: snapshot.inflight,
      limits: { maxConcurrency, maxQueued, maxInflight },
      refusals: refusals.get(model),
    };
  });
  return { models, totalSlots: snapshots[0]?.snapshot.totalSlots ?? null };
}
