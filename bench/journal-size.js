// What the data directory costs on disk per recorded model call (README, `--journal-retention-days`):
// `sluice serve` with the built-in echo model takes N calls, is stopped (which checkpoints the WAL
// into journal.db), and the file's size is divided by the calls. The baseline is the JSON of the
// records themselves, read back from the file: file bytes / record bytes is SQLite's overhead
// (pages, the call/task/session indexes, and for sessions the stored history).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { childEnv, cleanUp, listeningUrl, spawnNode, stopChild, tempDir } from './children.js';
import { closedLoop, fmt, table } from './lib.js';

const MAIN = fileURLToPath(new URL('../packages/daemon/dist/bundle/sluice.js', import.meta.url));
/** A user message of a typical chat turn: 100 characters. */
const TEXT =
  'Summarise the design of the bounded scheduler and name the limit that refuses a call first, please.';
const TURNS_PER_SESSION = 10;

async function post(url, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: ${response.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

/** N calls through the model gateway: one request and one result record each, nothing else. */
async function gatewayCalls(url, calls) {
  await closedLoop(calls, 8, () =>
    post(`${url}/v1/chat/completions`, { model: 'echo-1', messages: [{ role: 'user', content: TEXT }] }),
  );
}

/**
 * N prompts on sessions of TURNS_PER_SESSION turns each: every turn's model request carries the
 * session's history so far, and the session store keeps the history too.
 */
async function sessionPrompts(url, calls) {
  const sessions = [];
  for (let i = 0; i < calls / TURNS_PER_SESSION; i++) {
    const { sessionId } = await post(`${url}/session`, { sessionScope: 'thread' });
    sessions.push(sessionId);
    for (let turn = 0; turn < TURNS_PER_SESSION; turn++)
      await post(`${url}/session/${sessionId}/prompt`, { prompt: [{ type: 'text', text: TEXT }] });
  }
  for (const sessionId of sessions)
    for (;;) {
      const status = await (await fetch(`${url}/session/${sessionId}/status`)).json();
      if (status.pendingPromptCount === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

async function measure(name, calls, drive) {
  const dataDir = tempDir('sluice-size-');
  const child = spawnNode(
    [
      MAIN,
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--max-sessions',
      '100000',
      '--max-sessions-per-workspace',
      '100000',
      '--max-pending-prompts-per-session',
      String(TURNS_PER_SESSION),
    ],
    childEnv(),
  );
  const url = await listeningUrl(child);
  await drive(url, calls);
  await stopChild(child, 30_000);
  const file = path.join(dataDir, 'journal.db');
  const fileBytes = fs.statSync(file).size;
  const db = new Database(file, { readonly: true });
  const records = db.prepare('SELECT count(*) AS n, sum(length(body)) AS bytes FROM journal_records').get();
  db.close();
  if (records.n !== calls * 2) throw new Error(`${name}: ${records.n} records for ${calls} calls`);
  return { name, calls, fileBytes, recordBytes: records.bytes };
}

export async function benchJournalSize({ quick }) {
  const calls = quick ? 200 : 2_000;
  try {
    const rows = [];
    for (const [name, drive] of [
      ['gateway calls (`/v1/chat/completions`, one user message)', gatewayCalls],
      [
        `session prompts (${TURNS_PER_SESSION} turns a session, history stored and sent each turn)`,
        sessionPrompts,
      ],
    ]) {
      const result = await measure(name, calls, drive);
      rows.push([
        result.name,
        fmt(result.calls),
        fmt(result.fileBytes),
        fmt(result.fileBytes / result.calls),
        fmt(result.recordBytes / result.calls),
        `${fmt(result.fileBytes / result.recordBytes, 2)}×`,
      ]);
    }
    const markdown = [
      `\`sluice serve\` with the echo model, ${fmt(calls)} calls of a 100-character user message, then SIGTERM (the WAL is checkpointed into the file); the size of \`journal.db\` divided by the calls. *Record JSON* is the request and result records' JSON read back from the file, the baseline: the ratio is what SQLite adds (pages, indexes, and for sessions their stored history). Command: \`npm run build && node bench/run.js --only=size\`.`,
      '',
      table(
        [
          'calls',
          'n',
          'journal.db bytes',
          'bytes per call',
          'record JSON bytes per call',
          'file / record JSON',
        ],
        rows,
      ),
    ].join('\n');
    return { markdown };
  } finally {
    await cleanUp();
  }
}
