import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  JournalQuery,
  JournalUnavailableError,
  type JournalEntry,
  type JournalFilter,
} from './journal-query.js';
import { humanLines, jsonLine } from './journal-view.js';

/** Parsed options of `sluice journal`. */
export interface JournalOptions {
  dataDir: string;
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

/**
 * Prints the matching records of the data directory's journal, oldest first; with `follow`, then
 * polls for new ones every `pollMs` until `signal` aborts. Throws `JournalUnavailableError` when
 * the directory or its journal is missing or unreadable.
 */
export async function runJournal(
  options: JournalOptions,
  out: Writable,
  signal?: AbortSignal,
): Promise<void> {
  const query = new JournalQuery(resolve(options.dataDir), filterOf(options));
  try {
    let seen = 0;
    if (options.limit > 0) {
      const before = query.lastSeq();
      const entries = query.tail(options.limit);
      await print(out, entries, options);
      if (!options.follow) return;
      seen = Math.max(before, entries.at(-1)?.seq ?? 0);
    }
    // In batches, so that `--limit 0` over a large journal holds one batch at a time.
    while (!signal?.aborted) {
      const fresh = query.after(seen);
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
    query.close();
  }
}

/**
 * What to tell the user about a failure to read the journal, or `undefined` for a bug: a missing
 * directory or file, a newer schema, or SQLite's refusal (not a database, no permission).
 */
export function journalFailure(error: unknown): string | undefined {
  if (error instanceof JournalUnavailableError) return error.message;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code.startsWith('SQLITE_'))
    return `cannot read the journal: ${(error as Error).message} (${code})`;
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
