// @ts-check
/**
 * Writer thread of the SQLite journal: owns the only read-write connection and commits each
 * batch it receives in one transaction, so fsync and checkpoints never run on the thread that
 * admits work. The schema was migrated by the main thread before this thread started.
 *
 * Protocol (one batch in flight at a time):
 *   in:  { type: 'commit', bytes, ends }  the records' JSON texts in append order, as UTF-8 in
 *        one transferred buffer; ends[i] = where record i ends
 *        { type: 'close' }
 *   out: { type: 'committed', rejected? } | { type: 'failed', message, sqliteCode } | { type: 'closed', message? }
 *        rejected = [{ index, message, sqliteCode }]: records refused alone while the rest committed
 *
 * Every other column is computed by SQLite from the body (schema version 2), so a record costs
 * the main thread one string to encode and this thread one bound value: its bytes, which SQLite
 * takes as the UTF-8 text they are (`CAST(? AS TEXT)`), never decoded into a JavaScript string.
 */
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/**
 * @typedef {{
 *   path: string;
 *   synchronous: 'NORMAL' | 'FULL';
 *   busyTimeoutMs: number;
 *   walAutocheckpointPages: number;
 *   walSizeLimitBytes: number;
 *   idleCheckpointMs: number;
 *   pageCacheKiB: number;
 * }} WriterOptions
 */
/** @typedef {{ type: 'commit'; bytes: Uint8Array; ends: number[] } | { type: 'close' }} WriterRequest */

/** Rows per multi-row INSERT: one statement step binds this many bodies. */
const ROWS_PER_INSERT = 64;

if (!parentPort) throw new Error('sqlite-journal-worker.js must run as a worker thread');
const port = parentPort;
const options = /** @type {WriterOptions} */ (workerData);

const db = new Database(options.path, { fileMustExist: true });
// The file this connection writes. In WAL mode SQLite goes on committing into a database file
// that was deleted or replaced while open (it checks that only in rollback mode): the commits
// succeed and are lost. Each batch checks that the path still names this file.
const opened = statSync(options.path);
db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${options.synchronous}`);
// Space a write frees (cells moved when a page splits, settled rows rewritten) is zeroed, so a
// purged session's requests leave no copy in the free space of the file's pages.
db.pragma('secure_delete = ON');
// A larger WAL between checkpoints writes each hot page (index tails) back once per
// checkpoint instead of many times; journal_size_limit truncates the file after a checkpoint
// so that a burst does not leave a large WAL behind.
db.pragma(`wal_autocheckpoint = ${options.walAutocheckpointPages}`);
db.pragma(`journal_size_limit = ${options.walSizeLimitBytes}`);
db.pragma('temp_store = MEMORY');
// SQLite's own default instead of better-sqlite3's 16 MB: an append reuses only the B-tree's
// right edge (sqlite-connection.ts).
db.pragma(`cache_size = -${options.pageCacheKiB}`);

const insertMany = db.prepare(
  `INSERT INTO journal_records (body) VALUES ${Array.from({ length: ROWS_PER_INSERT }, () => '(CAST(? AS TEXT))').join(', ')}`,
);
const insertOne = db.prepare('INSERT INTO journal_records (body) VALUES (CAST(? AS TEXT))');

/**
 * The records of a commit request, each a view of the transferred bytes.
 * @param {Uint8Array} bytes @param {number[]} ends @returns {Buffer[]}
 */
function bodiesOf(bytes, ends) {
  const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return ends.map((end, i) => all.subarray(i === 0 ? 0 : ends[i - 1], end));
}

const commitBodies = db.transaction(
  /** @param {Buffer[]} bodies */
  (bodies) => {
    const whole = bodies.length - (bodies.length % ROWS_PER_INSERT);
    let i = 0;
    for (; i < whole; i += ROWS_PER_INSERT) insertMany.run(bodies.slice(i, i + ROWS_PER_INSERT));
    for (; i < bodies.length; i++) insertOne.run(bodies[i]);
  },
);

const insertAlone = db.transaction(
  /** @param {Buffer} body */
  (body) => insertOne.run(body),
);

/**
 * The batch again, each record under a savepoint of its own: what SQLite refuses in one record
 * (JSON it cannot parse, a constraint) is rolled back and reported alone, the rest commits.
 */
const commitEach = db.transaction(
  /** @param {Buffer[]} bodies */
  (bodies) => {
    /** @type {Array<{ index: number; message: string; sqliteCode: string | undefined }>} */
    const rejected = [];
    for (const [index, body] of bodies.entries()) {
      try {
        insertAlone(body);
      } catch (error) {
        rejected.push({ index, ...describe(error) });
      }
    }
    return rejected;
  },
);

/**
 * Result codes about the database rather than one record (busy, full, I/O, read-only, corrupt,
 * …): trying the records one by one would fail alike, only slower.
 */
const DATABASE_LEVEL =
  /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|NOMEM|CORRUPT|NOTADB|CANTOPEN|PERM|AUTH|PROTOCOL|INTERRUPT)/;

/** Commits `bodies`; returns the records refused alone (none when the batch committed whole). */
function commit(/** @type {Buffer[]} */ bodies) {
  try {
    commitBodies.immediate(bodies);
    return [];
  } catch (error) {
    const { sqliteCode } = describe(error);
    if (sqliteCode === undefined || DATABASE_LEVEL.test(sqliteCode) || bodies.length === 1) throw error;
    return commitEach.immediate(bodies);
  } finally {
    // Deleted or replaced before or during the commit: what it wrote is in no file that the
    // path names. One check after the commit covers both.
    checkFileInPlace();
  }
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let idleTimer;
let dirty = false;

/** When no batch came for a while, moves the WAL into the database without waiting for anyone. */
function checkpointWhenIdle() {
  idleTimer = undefined;
  if (!dirty || !db.open) return;
  dirty = false;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // A busy or failed passive checkpoint is retried by the next automatic one.
  }
}

port.on(
  'message',
  /** @param {WriterRequest} request */
  (request) => {
    if (request.type === 'commit') {
      try {
        const rejected = commit(bodiesOf(request.bytes, request.ends));
        port.postMessage(rejected.length > 0 ? { type: 'committed', rejected } : { type: 'committed' });
      } catch (error) {
        port.postMessage({ type: 'failed', ...describe(error) });
      }
      dirty = true;
      if (options.idleCheckpointMs > 0) {
        if (idleTimer) idleTimer.refresh();
        else idleTimer = setTimeout(checkpointWhenIdle, options.idleCheckpointMs);
      }
    } else if (request.type === 'close') {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = undefined;
      let message;
      try {
        db.close();
      } catch (error) {
        message = describe(error).message;
      }
      port.postMessage({ type: 'closed', message });
      port.close();
    }
  },
);

/** Throws when the database file was deleted, moved or replaced since this connection opened it. */
function checkFileInPlace() {
  const now = statSync(options.path, { throwIfNoEntry: false });
  if (now && now.ino === opened.ino && now.dev === opened.dev) return;
  const error = new Error(
    `the database file was ${now ? 'replaced' : 'deleted'} while the journal had it open; records written to it are lost`,
  );
  /** @type {Error & { code?: string }} */ (error).code = 'SQLITE_READONLY_DBMOVED';
  throw error;
}

/**
 * @param {unknown} error
 * @returns {{ message: string; sqliteCode: string | undefined }}
 */
function describe(error) {
  if (error instanceof Error) {
    const code = /** @type {{ code?: unknown }} */ (error).code;
    return { message: error.message, sqliteCode: typeof code === 'string' ? code : undefined };
  }
  return { message: String(error), sqliteCode: undefined };
}
