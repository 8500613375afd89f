import { systemClock, type Clock } from '@sluice/runtime';
import { JournalTap } from './journal-tap.js';
import { LabeledCounts } from './labeled-counts.js';
import { ModelTap } from './model-tap.js';
import { PromptTap } from './prompt-tap.js';
import { RecentRefusals } from './recent-refusals.js';

/** Options of a {@link DaemonTap}. */
export interface DaemonTapOptions {
  /** The model runtime's clock, for the phase durations; default the system clock. */
  clock?: Clock;
  /** Wall-clock ms for the refusals' times; default `Date.now`. */
  wallNow?: () => number;
  /** Refusals the dashboard lists; default 20. */
  recentRefusals?: number;
}

/**
 * The counters the daemon keeps for operators, as plain numbers that its parts bump as things
 * happen: prompts and turns (told by the session bridge), model calls (the scheduler), the
 * journal (the SQLite writer). `/metrics` and `/dashboard` read them together with the
 * snapshots the API serves; nothing else keeps a count of its own. prom-client is not needed
 * to count, only to format a scrape, so it is loaded on the first one.
 */
export class DaemonTap {
  /** The last refusals of prompts and model calls, for the dashboard. */
  readonly refusals: RecentRefusals;
  readonly prompts: PromptTap;
  readonly model: ModelTap;
  readonly journal: JournalTap;
  /** HTTP requests refused by `--rate-limit`, by tier (`prompt`, `mutation`, `read`). */
  readonly rateLimited = new LabeledCounts(['tier'], 4);

  constructor(options: DaemonTapOptions = {}) {
    this.refusals = new RecentRefusals(options.recentRefusals ?? 20, options.wallNow ?? Date.now);
    this.prompts = new PromptTap(this.refusals);
    this.model = new ModelTap(this.refusals, options.clock ?? systemClock);
    this.journal = new JournalTap();
  }
}
