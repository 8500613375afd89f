import { existsSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EventStream } from '../helpers/http-client.js';
import { openSession, promptAndWait, startAgentDaemon, testAgent, type AgentDaemon } from './acp-helpers.js';

// The agent's fs/read_text_file and fs/write_text_file are served inside the session's
// workspace only: symlinks are resolved, and a path outside is a JSON-RPC error with nothing
// read or written (issue 18 §1).

describe("an agent's file requests", () => {
  let d: AgentDaemon;
  let session: { sessionId: string; stream: EventStream };
  let outside: string;
  beforeAll(async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)]);
    session = await openSession(d.url);
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-outside-')));
    writeFileSync(join(outside, 'secret.txt'), 'do not read');
    writeFileSync(join(d.workspace, 'notes.txt'), 'one\ntwo\nthree\nfour');
    symlinkSync(outside, join(d.workspace, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(d.workspace, 'secret-link.txt'));
    symlinkSync(join(outside, 'nowhere.txt'), join(d.workspace, 'dangling.txt'));
  });
  afterAll(async () => {
    session?.stream.close();
    await d?.stop();
  });
  const run = async (text: string): Promise<string> => (await promptAndWait(d.url, session, text)).text;

  test('a read inside the workspace is served, with line and limit', async () => {
    expect(await run(`read ${join(d.workspace, 'notes.txt')}`)).toBe('read:one\ntwo\nthree\nfour');
    expect(await run(`read ${join(d.workspace, 'notes.txt')} 2 2`)).toBe('read:two\nthree');
  });

  test('a write inside the workspace creates the file (and missing directories)', async () => {
    expect(await run(`write ${join(d.workspace, 'out', 'new.txt')} written by the agent`)).toBe('written');
    expect(readFileSync(join(d.workspace, 'out', 'new.txt'), 'utf8')).toBe('written by the agent');
  });

  test('a read outside the workspace is refused and nothing is read', async () => {
    const answer = await run(`read ${join(outside, 'secret.txt')}`);
    expect(answer).toMatch(/^error:-32602:.*outside the session's workspace/);
    expect(answer).not.toContain('do not read');
  });

  test('a read through a symlink that leads outside is refused', async () => {
    expect(await run(`read ${join(d.workspace, 'secret-link.txt')}`)).toMatch(/^error:-32602:.*outside/);
    expect(await run(`read ${join(d.workspace, 'escape', 'secret.txt')}`)).toMatch(/^error:-32602:.*outside/);
  });

  test('a write outside, through a symlinked directory or a dangling symlink, writes nothing', async () => {
    expect(await run(`write ${join(outside, 'planted.txt')} x`)).toMatch(/^error:-32602:/);
    expect(await run(`write ${join(d.workspace, 'escape', 'planted.txt')} x`)).toMatch(/^error:-32602:/);
    expect(await run(`write ${join(d.workspace, 'dangling.txt')} x`)).toMatch(/^error:-32602:/);
    expect(await run(`write ${join(d.workspace, '..', 'planted.txt')} x`)).toMatch(/^error:-32602:/);
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    expect(existsSync(join(outside, 'nowhere.txt'))).toBe(false);
  });
});
