// @ts-check
/**
 * Writer thread of the SQLite journal: owns the only read-write connection and commits each
 * batch it receives in one transaction, so fsync and checkpoints never run on the thread that
 * admits work. The schema was migrated by the main thread before this thread started.
 *
 * Protocol (one batch in flight at a time):
 *   in:  { type: 'commit', rows }  rows = flat [version, type, callId, taskId, sessionId, at, body, ...]
 *        { type: 'close' }
 *   out: { type: 'committed' } | { type: 'failed', message, sqliteCode } | { type: 'closed', message? }
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** @typedef {{ path: string; synchronous: 'NORMAL' | 'FULL'; busyTimeoutMs: number }} WriterOptions */
/** @typedef {Array<string | number | null>} Rows */
/** @typedef {{ type: 'commit'; rows: Rows } | { type: 'close' }} WriterRequest */

const COLUMNS = 7;

if (!parentPort) throw new Error('sqlite-journal-worker.js must run as a worker thread');
const port = parentPort;
const options = /** @type {WriterOptions} */ (workerData);

const db = new Database(options.path, { fileMustExist: true });
db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${options.synchronous}`);

const insert = db.prepare(
  'INSERT INTO journal_records (version, type, call_id, task_id, session_id, at, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
);

const commitRows = db.transaction(
  /** @param {Rows} rows */
  (rows) => {
    for (let i = 0; i < rows.length; i += COLUMNS) {
      insert.run(rows[i], rows[i + 1], rows[i + 2], rows[i + 3], rows[i + 4], rows[i + 5], rows[i + 6]);
    }
  },
);

port.on(
  'message',
  /** @param {WriterRequest} request */
  (request) => {
    if (request.type === 'commit') {
      try {
        commitRows.immediate(request.rows);
        port.postMessage({ type: 'committed' });
      } catch (error) {
        port.postMessage({ type: 'failed', ...describe(error) });
      }
    } else if (request.type === 'close') {
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
