// @ts-check
/**
 * Writer thread of the SQLite journal: owns the only read-write connection and commits each
 * batch it receives in one transaction, so fsync and checkpoints never run on the thread that
 * admits work. The schema was migrated by the main thread before this thread started.
 *
 * Protocol (one batch in flight at a time):
 *   in:  { type: 'commit', bodies }  bodies = the records' JSON texts, in append order
 *        { type: 'close' }
 *   out: { type: 'committed' } | { type: 'failed', message, sqliteCode } | { type: 'closed', message? }
 *
 * Every other column is computed by SQLite from the body (schema version 2), so a record costs
 * the main thread one string to send and this thread one bound value.
 */
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
 * }} WriterOptions
 */
/** @typedef {{ type: 'commit'; bodies: string[] } | { type: 'close' }} WriterRequest */

/** Rows per multi-row INSERT: one statement step binds this many bodies. */
const ROWS_PER_INSERT = 64;

if (!parentPort) throw new Error('sqlite-journal-worker.js must run as a worker thread');
const port = parentPort;
const options = /** @type {WriterOptions} */ (workerData);

const db = new Database(options.path, { fileMustExist: true });
db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${options.synchronous}`);
// A larger WAL between checkpoints writes each hot page (index tails) back once per
// checkpoint instead of many times; journal_size_limit truncates the file after a checkpoint
// so that a burst does not leave a large WAL behind.
db.pragma(`wal_autocheckpoint = ${options.walAutocheckpointPages}`);
db.pragma(`journal_size_limit = ${options.walSizeLimitBytes}`);
db.pragma('temp_store = MEMORY');

const insertMany = db.prepare(
  `INSERT INTO journal_records (body) VALUES ${Array.from({ length: ROWS_PER_INSERT }, () => '(?)').join(', ')}`,
);
const insertOne = db.prepare('INSERT INTO journal_records (body) VALUES (?)');

const commitBodies = db.transaction(
  /** @param {string[]} bodies */
  (bodies) => {
    const whole = bodies.length - (bodies.length % ROWS_PER_INSERT);
    let i = 0;
    for (; i < whole; i += ROWS_PER_INSERT) insertMany.run(bodies.slice(i, i + ROWS_PER_INSERT));
    for (; i < bodies.length; i++) insertOne.run(bodies[i]);
  },
);

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
        commitBodies.immediate(request.bodies);
        port.postMessage({ type: 'committed' });
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
