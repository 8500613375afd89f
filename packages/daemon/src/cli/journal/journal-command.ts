import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JournalEntry, JournalFilter } from '@sluice/runtime';
import { FOLLOW_BATCH, JournalQuery, JournalUnavailableError } from './journal-query.js';
import { humanLines, jsonLine } from './journal-view.js';

/** Parsed options of `sluice journal`. */
export interface JournalOptions {
  dataDir: string;
  /** A fleet's PostgreSQL database (`postgres://…`), read instead of `dataDir`'s SQLite journal. */
  store?: string;
  session?: string;
  prompt?: string;
  code?: string;
  /** ms since the epoch (`--since`, parsed when the command started). */
  since?: number;
  until?: number;
  /** The newest this many matching records; 0 = all. */
  limit: number;
  follow?: boolean;
  pollMs: number;
  json?: boolean;
  showContent?: boolean;
}

/** What {@link runJournal} reads: a data directory's SQLite journal, or a fleet's PostgreSQL one. */
interface JournalSource {
  tail(limit: number): JournalEntry[] | Promise<JournalEntry[]>;
  after(seq: number): JournalEntry[] | Promise<JournalEntry[]>;
  lastSeq(): number | Promise<number>;
  close(): void | Promise<void>;
}

/** The journal `options` name; `@sluice/fleet` (and its PostgreSQL client) loads only for `store`. */
async function openSource(options: JournalOptions): Promise<JournalSource> {
  if (options.store === undefined) return new JournalQuery(resolve(options.dataDir), filterOf(options));
  const { PostgresJournalQuery } = await import('@sluice/fleet');
  const query = await PostgresJournalQuery.open(options.store, filterOf(options));
  return {
    tail: (limit) => query.tail(limit),
    after: (seq) => query.after(seq, FOLLOW_BATCH),
    lastSeq: () => query.lastSeq(),
    close: () => query.close(),
  };
}

/**
 * Prints the matching records of the journal, oldest first; with `follow`, then polls for new
 * ones every `pollMs` until `signal` aborts. Throws `JournalUnavailableError` when the directory
 * or its journal is missing or unreadable, the store's errors when `store` cannot be read.
 */
export async function runJournal(
  options: JournalOptions,
  out: Writable,
  signal?: AbortSignal,
): Promise<void> {
  const query = await openSource(options);
  try {
    let seen = 0;
    if (options.limit > 0) {
      const before = await query.lastSeq();
      const entries = await query.tail(options.limit);
      await print(out, entries, options);
      if (!options.follow) return;
      seen = Math.max(before, entries.at(-1)?.seq ?? 0);
    }
    // In batches, so that `--limit 0` over a large journal holds one batch at a time.
    while (!signal?.aborted) {
      const fresh = await query.after(seen);
      if (fresh.length > 0) {
        seen = fresh.at(-1)!.seq;
        await print(out, fresh, options);
        continue;
      }
      if (!options.follow) return;
      // An abort just ends the wait; the loop then returns.
      await sleep(options.pollMs, undefined, { signal }).catch(() => {});
    }
  } finally {
    await query.close();
  }
}

/** Codes of the stores' refusals `sluice journal` reports as they are. */
const STORE_CODES = new Set(['store_unreachable', 'store_schema_too_new']);

/**
 * What to tell the user about a failure to read the journal, with its code, or `undefined` for a
 * bug: a missing directory or file, a newer schema, SQLite's refusal (not a database, no
 * permission), a `--store` that is not a PostgreSQL URL or cannot be reached.
 */
export function journalFailure(error: unknown): { message: string; code: string } | undefined {
  if (error instanceof JournalUnavailableError)
    return { message: error.message, code: 'journal_unavailable' };
  if (error instanceof RangeError) return { message: error.message, code: 'invalid_config' };
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  const { message } = error as Error;
  if (code.startsWith('SQLITE_'))
    return { message: `cannot read the journal: ${message} (${code})`, code: 'journal_unavailable' };
  if (STORE_CODES.has(code)) return { message: `--store: ${message}`, code };
  return undefined;
}

function filterOf(options: JournalOptions): JournalFilter {
  const filter: JournalFilter = {};
  if (options.session !== undefined) filter.sessionId = options.session;
  if (options.prompt !== undefined) filter.promptId = options.prompt;
  if (options.code !== undefined) filter.code = options.code;
  if (options.since !== undefined) filter.sinceMs = options.since;
  if (options.until !== undefined) filter.untilMs = options.until;
  return filter;
}

/** Writes the entries in one chunk, waiting for the stream to drain when it asks to. */
async function print(out: Writable, entries: JournalEntry[], options: JournalOptions): Promise<void> {
  if (entries.length === 0) return;
  const showContent = options.showContent ?? false;
  const format = options.json ? jsonLine : humanLines;
  const text = entries.map((entry) => format(entry, showContent)).join('\n') + '\n';
  if (!out.write(text)) await new Promise<void>((resolveDrain) => out.once('drain', resolveDrain));
}
