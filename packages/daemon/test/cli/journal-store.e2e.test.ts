import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshSchema, PG_URL, type TestSchema } from '../../../fleet/test/postgres/pg-schema.js';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { logLines } from '../helpers/log-lines.js';
import { runSluice, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// `sluice journal --store postgres://…` reads a fleet's journal on real PostgreSQL, with the
// same filters and views as a data directory's, without a lease or a migration of its own.
let schema: TestSchema;
let empty: TestSchema;
let daemon: SluiceProcess;
let store: string;
const sessions: string[] = [];

/** Sends a prompt and waits for its terminal event: its records are then committed. */
async function promptAndWait(sessionId: string, text: string): Promise<void> {
  const stream = await openEvents(daemon.url, sessionId, { headers: { 'Last-Event-ID': '0' } });
  try {
    const admitted = await api(daemon.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt(text),
    });
    await stream.waitFor(
      (frame) => frame.event === 'turn_complete' && frame.data.promptId === admitted.body.promptId,
    );
  } finally {
    stream.close();
  }
}

function journal(...args: string[]): ReturnType<typeof runSluice> {
  return runSluice(['journal', ...args]);
}

beforeAll(async () => {
  [schema, empty] = await Promise.all([freshSchema('journal_cli'), freshSchema('journal_empty')]);
  store = `${PG_URL}?search_path=${schema.name}`;
  daemon = await startSluice(['--store', store]);
  for (let i = 0; i < 2; i++) {
    const created = await api(daemon.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    sessions.push(created.body.sessionId as string);
    await promptAndWait(created.body.sessionId as string, `store-secret-${i}`);
  }
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  await Promise.all([schema?.drop(), empty?.drop()]);
});

describe('sluice journal --store', () => {
  test('lists the requests and results the fleet committed, without prompt or answer text', async () => {
    const result = await journal('--store', store);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/#\d+ request call=\S+ session=\S+ prompt=\S+ model=echo\/echo-1/);
    expect(lines[1]).toMatch(/#\d+ result {2}.*outcome=success stop=end_turn tokens=\d+\+\d+/);
    expect(result.stdout).not.toContain('store-secret');
  });

  test('--session, --code and --limit narrow the records as they do on a data directory', async () => {
    const bySession = await journal('--store', store, '--json', '--session', sessions[1]!);
    const records = bySession.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; sessionId?: string });
    expect(records.map((record) => record.type)).toEqual(['model_request', 'model_result']);
    expect(records[0]!.sessionId).toBe(sessions[1]);
    const results = await journal('--store', store, '--code', 'end_turn');
    expect(results.stdout.trim().split('\n')).toHaveLength(2);
    expect((await journal('--store', store, '--code', 'model_timeout')).stdout).toBe('');
    const newest = await journal('--store', store, '--limit', '1', '--json');
    expect(JSON.parse(newest.stdout) as { type: string }).toMatchObject({ type: 'model_result' });
  });

  test('--show-content prints the prompt text the store holds', async () => {
    const result = await journal('--store', store, '--show-content', '--session', sessions[0]!);
    expect(result.stdout).toContain('store-secret-0');
  });

  test('a database no daemon has written to reads as an empty journal', async () => {
    const result = await journal('--store', `${PG_URL}?search_path=${empty.name}`);
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  test('an unreachable --store: exit 1, code store_unreachable, the password hidden', async () => {
    const result = await journal('--store', 'postgres://sluice:hunter2@127.0.0.1:1/test');
    expect(result.code).toBe(1);
    const [line] = logLines(result.stderr);
    expect(line).toMatchObject({ code: 'store_unreachable' });
    expect(line!['msg']).toContain('--store: Store "postgres://sluice:***@127.0.0.1:1/test" is unreachable');
    expect(result.stderr).not.toContain('hunter2');
  });

  test('a --store that is not a PostgreSQL URL, and --follow with --store, are refused naming the flag', async () => {
    const mysql = await journal('--store', 'mysql://db/sluice');
    expect(mysql.code).toBe(1);
    expect(logLines(mysql.stderr)[0]).toMatchObject({ code: 'invalid_config' });
    expect(mysql.stderr).toContain('--store must be a postgres:// or postgresql:// URL');
    const follow = await journal('--store', store, '--follow');
    expect(follow.code).toBe(1);
    expect(logLines(follow.stderr)[0]!['msg']).toContain('--follow reads a --data-dir journal only');
  });
});
