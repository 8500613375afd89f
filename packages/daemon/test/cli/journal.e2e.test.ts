import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { spawnCli } from '../helpers/cli-stream.js';
import { logLines } from '../helpers/log-lines.js';
import { runSluice, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

interface JsonRecord {
  seq: number;
  type: 'model_request' | 'model_result';
  callId: string;
  sessionId?: string;
  turnId?: string;
  stopReason?: string;
  textBytes?: number;
  text?: string;
  request: { messages: unknown };
}

let daemon: SluiceProcess;
const sessions: string[] = [];
const prompts: string[] = [];
const secret = (i: number): string => `journal-secret-${i}`;

/** Sends a prompt and waits for its terminal event: its records are then committed. */
async function promptAndWait(sessionId: string, text: string): Promise<string> {
  const stream = await openEvents(daemon.url, sessionId, { headers: { 'Last-Event-ID': '0' } });
  try {
    const admitted = await api(daemon.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt(text),
    });
    await stream.waitFor(
      (frame) => frame.event === 'turn_complete' && frame.data.promptId === admitted.body.promptId,
    );
    return admitted.body.promptId as string;
  } finally {
    stream.close();
  }
}

function journal(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runSluice(['journal', '--data-dir', daemon.dataDir, ...args]);
}

function jsonLines(stdout: string): JsonRecord[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as JsonRecord);
}

// Two sessions, one prompt each: four records, read while the daemon runs.
beforeAll(async () => {
  daemon = await startSluice();
  for (let i = 0; i < 2; i++) {
    const created = await api(daemon.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
    sessions.push(created.body.sessionId);
    prompts.push(await promptAndWait(created.body.sessionId, secret(i)));
  }
});
afterAll(() => daemon?.stop());

describe('sluice journal', () => {
  test('lists requests and results of a running daemon, with ids, codes and sizes but no prompt or answer text', async () => {
    const result = await journal();
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/#1 request call=\S+ session=\S+ prompt=\S+ model=echo\/echo-1/);
    expect(lines[1]).toMatch(/#2 result {2}.*outcome=success stop=end_turn tokens=\d+\+\d+/);
    expect(result.stdout).not.toContain('journal-secret');
  });

  test('--json prints one redacted record per line: message counts and text sizes', async () => {
    const records = jsonLines((await journal('--json')).stdout);
    expect(records.map((record) => record.type)).toEqual([
      'model_request',
      'model_result',
      'model_request',
      'model_result',
    ]);
    expect(records[0]).toMatchObject({ seq: 1, sessionId: sessions[0], turnId: prompts[0] });
    expect(records[0]!.request.messages).toBe(1);
    expect(records[1]!.textBytes).toBeGreaterThan(0);
    expect(records[1]!.text).toBeUndefined();
    expect(JSON.stringify(records)).not.toContain('journal-secret');
  });

  test('--show-content adds the prompt and the answer', async () => {
    const result = await journal('--show-content', '--session', sessions[1]!);
    expect(result.stdout).toContain(`user: ${secret(1)}`);
    expect(result.stdout).toContain('text: ');
    expect(result.stdout).not.toContain(secret(0));
    const records = jsonLines((await journal('--json', '--show-content', '--limit', '1')).stdout);
    expect(records[0]!.text).toContain(secret(1));
  });

  test('--session keeps one session; --prompt keeps the request and result of one prompt', async () => {
    const bySession = jsonLines((await journal('--json', '--session', sessions[1]!)).stdout);
    expect(bySession.map((record) => record.seq)).toEqual([3, 4]);
    const byPrompt = jsonLines((await journal('--json', '--prompt', prompts[0]!)).stdout);
    expect(byPrompt.map((record) => record.type)).toEqual(['model_request', 'model_result']);
    expect(new Set(byPrompt.map((record) => record.callId)).size).toBe(1);
  });

  test('--code keeps results with that stop reason or error code', async () => {
    const ended = jsonLines((await journal('--json', '--code', 'end_turn')).stdout);
    expect(ended.map((record) => record.seq)).toEqual([2, 4]);
    expect((await journal('--code', 'model_timeout')).stdout).toBe('');
  });

  test('--since and --until take ISO times and durations ago; --limit keeps the newest', async () => {
    expect(jsonLines((await journal('--json', '--since', '1h')).stdout)).toHaveLength(4);
    expect((await journal('--until', '1h')).stdout).toBe('');
    expect((await journal('--since', '2999-01-01T00:00:00Z')).stdout).toBe('');
    expect(jsonLines((await journal('--json', '--until', '2999-01-01')).stdout)).toHaveLength(4);
    expect(jsonLines((await journal('--json', '--limit', '3')).stdout).map((record) => record.seq)).toEqual([
      2, 3, 4,
    ]);
  });

  test('a bad --since is refused naming the flag and the accepted forms', async () => {
    const result = await journal('--since', 'yesterday');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--since');
    expect(result.stderr).toContain('10m');
  });

  test('--follow prints a record committed after it started', async () => {
    const follow = spawnCli([
      'journal',
      '--data-dir',
      daemon.dataDir,
      '--json',
      '--follow',
      '--poll-ms',
      '20',
    ]);
    try {
      await follow.waitForStdout((out) => jsonLines(out).length === 4);
      const promptId = await promptAndWait(sessions[0]!, 'followed');
      const out = await follow.waitForStdout((text) => jsonLines(text).some((record) => record.seq === 6));
      const fresh = jsonLines(out).slice(4);
      expect(fresh.map((record) => record.type)).toEqual(['model_request', 'model_result']);
      expect(fresh[0]!.turnId).toBe(promptId);
    } finally {
      expect(await follow.stop('SIGINT')).toBe(0);
    }
  });
});

describe('sluice journal without a journal', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sluice-journal-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  test('a missing data directory: exit 1 naming it', async () => {
    const missing = join(scratch, 'missing');
    const result = await runSluice(['journal', '--data-dir', missing]);
    expect(result.code).toBe(1);
    const [line] = logLines(result.stderr);
    expect(line).toMatchObject({ code: 'journal_unavailable' });
    expect(line!['msg']).toContain(`data directory "${missing}" does not exist`);
  });

  test('a data directory without journal.db: exit 1 saying so', async () => {
    const result = await runSluice(['journal', '--data-dir', scratch]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('journal.db is missing');
  });

  test("a journal.db that is not SQLite: exit 1 with SQLite's reason", async () => {
    const dir = mkdtempSync(join(scratch, 'garbage-'));
    writeFileSync(join(dir, 'journal.db'), 'not a database at all, just some text to read'.repeat(100));
    const result = await runSluice(['journal', '--data-dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot read the journal');
  });
});
