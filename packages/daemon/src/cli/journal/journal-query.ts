import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  JOURNAL_SCHEMA_VERSION,
  type JournalEntry,
  type JournalFilter,
  type JournalRecord,
} from '@sluice/runtime';
import { JOURNAL_FILE } from '../../persistence/index.js';

/** Thrown when the journal cannot be read; the CLI prints the message and exits 1. */
export class JournalUnavailableError extends Error {}

/** Records one `--follow` poll reads at most, so that a burst is printed in bounded steps. */
export const FOLLOW_BATCH = 1_000;

interface Row {
  seq: number;
  body: string;
}

type Params = Record<string, string | number>;

interface Statements {
  tail: Database.Statement<Params, Row>;
  after: Database.Statement<Params, Row>;
  lastSeq: Database.Statement<[], number>;
}

/**
 * A read-only view of a data directory's SQLite journal with filters, for `sluice journal`. It
 * opens its own read-only connection and takes no lock, so it works beside a running daemon
 * (WAL: readers see committed records and never block the writer). A file the daemon created
 * but has not written yet reads as empty until its table appears.
 */
export class JournalQuery {
  private readonly db: Database.Database;
  private readonly where: string;
  private readonly params: Record<string, string>;
  /** Prepared once the table exists (a new daemon creates it on its first start). */
  private statements: Statements | undefined;

  /** Opens `<dataDir>/journal.db`; throws {@link JournalUnavailableError} naming what is missing. */
  constructor(
    readonly dataDir: string,
    filter: JournalFilter,
  ) {
    const path = journalPath(dataDir);
    try {
      this.db = new Database(path, { readonly: true, fileMustExist: true });
      this.db.pragma('busy_timeout = 5000');
    } catch (error) {
      throw new JournalUnavailableError(`cannot open the journal "${path}": ${(error as Error).message}`);
    }
    [this.where, this.params] = whereClause(filter);
  }

  /** The newest `limit` matching records (all when `limit` is 0), oldest first. */
  tail(limit: number): JournalEntry[] {
    const rows = this.prepared()?.tail.all({ ...this.params, limit: limit === 0 ? -1 : limit }) ?? [];
    return rows.reverse().map(entryOf);
  }

  /** Matching records after `seq`, oldest first, at most {@link FOLLOW_BATCH}. */
  after(seq: number): JournalEntry[] {
    const rows = this.prepared()?.after.all({ ...this.params, after: seq, limit: FOLLOW_BATCH }) ?? [];
    return rows.map(entryOf);
  }

  /** The highest `seq` in the file, matching or not (0 when empty): where `--follow` starts. */
  lastSeq(): number {
    return this.prepared()?.lastSeq.get() ?? 0;
  }

  close(): void {
    this.db.close();
  }

  /** The statements, once the daemon has created the table; the schema version is checked then. */
  private prepared(): Statements | undefined {
    if (this.statements !== undefined) return this.statements;
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version === 0) return undefined;
    if (version > JOURNAL_SCHEMA_VERSION)
      throw new JournalUnavailableError(
        `the journal in "${this.dataDir}" has schema version ${version}, newer than this build reads (${JOURNAL_SCHEMA_VERSION}); use the sluice that wrote it`,
      );
    const where = this.where;
    return (this.statements = {
      tail: this.db.prepare(
        `SELECT seq, body FROM journal_records WHERE ${where} ORDER BY seq DESC LIMIT :limit`,
      ),
      after: this.db.prepare(
        `SELECT seq, body FROM journal_records WHERE seq > :after AND ${where} ORDER BY seq LIMIT :limit`,
      ),
      lastSeq: this.db.prepare<[], number>('SELECT coalesce(max(seq), 0) FROM journal_records').pluck(),
    });
  }
}

/** `<dataDir>/journal.db`, after checking that both exist; else {@link JournalUnavailableError}. */
function journalPath(dataDir: string): string {
  const stats = statSync(dataDir, { throwIfNoEntry: false });
  if (stats === undefined)
    throw new JournalUnavailableError(
      `data directory "${dataDir}" does not exist; pass the --data-dir the daemon runs with`,
    );
  if (!stats.isDirectory()) throw new JournalUnavailableError(`--data-dir "${dataDir}" is not a directory`);
  const path = join(dataDir, JOURNAL_FILE);
  if (!existsSync(path))
    throw new JournalUnavailableError(
      `no journal in "${dataDir}" (${JOURNAL_FILE} is missing): has a daemon run with this --data-dir?`,
    );
  return path;
}

/** The SQL condition of `filter`, with named parameters; the indexed `session_id` column first. */
function whereClause(filter: JournalFilter): [string, Record<string, string>] {
  const terms: string[] = [];
  const params: Record<string, string> = {};
  if (filter.sessionId !== undefined) {
    terms.push('session_id = :session');
    params['session'] = filter.sessionId;
  }
  if (filter.promptId !== undefined) {
    // Only a call's request names the prompt: its result is found through the call id. The
    // session index narrows the scan when a session is given too.
    const inSession = filter.sessionId === undefined ? '' : 'session_id = :session AND ';
    terms.push(
      `call_id IN (SELECT call_id FROM journal_records WHERE ${inSession}json_extract(body, '$.turnId') = :prompt)`,
    );
    params['prompt'] = filter.promptId;
  }
  if (filter.code !== undefined) {
    terms.push("(json_extract(body, '$.stopReason') = :code OR json_extract(body, '$.error.code') = :code)");
    params['code'] = filter.code;
  }
  // `at` is ISO 8601 in UTC with milliseconds, so text order is time order.
  if (filter.sinceMs !== undefined) {
    terms.push('at >= :since');
    params['since'] = new Date(filter.sinceMs).toISOString();
  }
  if (filter.untilMs !== undefined) {
    terms.push('at < :until');
    params['until'] = new Date(filter.untilMs).toISOString();
  }
  return [terms.length === 0 ? '1' : terms.join(' AND '), params];
}

function entryOf(row: Row): JournalEntry {
  return { seq: row.seq, record: JSON.parse(row.body) as JournalRecord };
}
