import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, test } from 'vitest';
import { INITIALIZE, clientApp, type AcpClientLog } from '../helpers/acp-client.js';
import { SLUICE_MAIN } from '../helpers/sluice-process.js';

interface StdioAgent {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  connection: acp.ClientConnection;
  log: AcpClientLog;
  workspace: string;
  stderr(): string;
  exited: Promise<number | null>;
}

const running: StdioAgent[] = [];

/** Spawns `node dist/cli/main.js acp --data-dir <tmp> ...args` and connects the ACP SDK client to its pipes. */
function spawnAcp(args: string[] = []): StdioAgent {
  const workspace = mkdtempSync(join(tmpdir(), 'sluice-acp-'));
  const child = spawn(
    process.execPath,
    [SLUICE_MAIN, 'acp', '--data-dir', workspace, '--workspace', workspace, ...args],
    { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, SLUICE_LOG_LEVEL: 'warn' } },
  );
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  void exited.then(() => rmSync(workspace, { recursive: true, force: true }));
  const log: AcpClientLog = { updates: [], notifications: [] };
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const agent = {
    child,
    connection: clientApp(log).connect(stream),
    log,
    workspace,
    stderr: () => err,
    exited,
  };
  running.push(agent);
  return agent;
}

afterEach(async () => {
  for (const agent of running.splice(0)) {
    agent.child.stdin.end();
    if (
      (await Promise.race([agent.exited, new Promise((r) => setTimeout(() => r('timeout'), 5000))])) ===
      'timeout'
    )
      agent.child.kill('SIGKILL');
  }
});

describe('sluice acp: ACP over stdio (PROTOCOL §8)', () => {
  test('§8 initialize → session/new → session/prompt → end_turn, updates before the answer', async () => {
    const { connection, log, workspace } = spawnAcp();
    const init = await connection.agent.request('initialize', INITIALIZE);
    expect(init).toMatchObject({ protocolVersion: 1, agentInfo: { name: 'sluice' } });
    const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
    const answer = await connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'hello over stdio' }],
    });
    expect(answer).toEqual({ stopReason: 'end_turn' });
    expect(log.updates.map((u) => u.update.sessionUpdate)).toEqual(
      expect.arrayContaining(['user_message_chunk', 'agent_message_chunk']),
    );
    expect(log.notifications.map((n) => n.kind)).toContain('turn_complete');
  });

  test('BP-10 a full queue answers session/prompt with -32603 and data.errorKind prompt_queue_full', async () => {
    const { connection, workspace } = spawnAcp([
      '--echo-delay-ms',
      '2000',
      '--max-pending-prompts-per-session',
      '1',
      '--drain-timeout-ms',
      '0',
    ]);
    await connection.agent.request('initialize', INITIALIZE);
    const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
    const first = connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'slow' }],
    });
    const refused = await connection.agent
      .request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'too many' }] })
      .catch((error: acp.RequestError) => error);
    expect(refused).toMatchObject({
      code: -32603,
      data: { errorKind: 'prompt_queue_full', sessionId, limit: 1, pendingCount: 1, httpStatus: 503 },
    });
    await connection.agent.notify('session/cancel', { sessionId });
    await expect(first).resolves.toEqual({ stopReason: 'cancelled' });
  });

  test('§8 the process drains and exits 0 when stdin ends', async () => {
    const agent = spawnAcp();
    await agent.connection.agent.request('initialize', INITIALIZE);
    agent.child.stdin.end();
    expect(await agent.exited).toBe(0);
  });

  test('§8 SIGTERM drains and exits 0 although stdin stays open', async () => {
    const agent = spawnAcp();
    await agent.connection.agent.request('initialize', INITIALIZE);
    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
  });

  test('§8 a bad flag exits 1 naming it, on stderr', async () => {
    const agent = spawnAcp(['--max-pending-prompts-per-session', '-1']);
    expect(await agent.exited).toBe(1);
    expect(agent.stderr()).toContain('--max-pending-prompts-per-session');
  });
});

describe('sluice acp: session/load of a live session (PROTOCOL §8)', () => {
  test('§8 session/load of a session this connection already has replays its history before answering', async () => {
    const { connection, log, workspace } = spawnAcp();
    await connection.agent.request('initialize', INITIALIZE);
    const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
    await connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'remember me' }],
    });
    const live = log.updates.map((u) => u.update.sessionUpdate);
    expect(live).toContain('agent_message_chunk');
    // The IDE reopens the thread from its history panel: ACP says load replays the conversation.
    log.updates.length = 0;
    await expect(
      connection.agent.request('session/load', { sessionId, cwd: workspace, mcpServers: [] }),
    ).resolves.toEqual({});
    // Checked as soon as the answer arrived: the history comes before it, exactly once.
    expect(log.updates.map((u) => u.update.sessionUpdate)).toEqual(live);
  });

  test('§8 / issue 19 item 17: session/load in the middle of a streamed answer replays each frame once', async () => {
    const { connection, log, workspace } = spawnAcp();
    await connection.agent.request('initialize', INITIALIZE);
    const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
    const long = 'stream me '.repeat(6_000);
    const answered = connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: long }],
    });
    // Reload while the answer is still streaming: frames are in flight in the old subscription.
    await expect
      .poll(() => log.updates.filter((u) => u.update.sessionUpdate === 'agent_message_chunk').length)
      .toBeGreaterThan(5);
    await connection.agent.request('session/load', { sessionId, cwd: workspace, mcpServers: [] });
    await expect(answered).resolves.toEqual({ stopReason: 'end_turn' });
    const texts = log.updates.map((u) => (u.update as { content?: { text?: string } }).content?.text);
    // The replay starts with the prompt again; from there on, every delta arrives exactly once.
    const replayStart = texts.lastIndexOf(long);
    expect(replayStart).toBeGreaterThan(0);
    const replayed = log.updates
      .slice(replayStart + 1)
      .filter((u) => u.update.sessionUpdate === 'agent_message_chunk')
      .map((u) => (u.update as { content: { text: string } }).content.text)
      .join('');
    expect(replayed.length).toBe(`Echo: ${long}`.length);
    expect(replayed).toBe(`Echo: ${long}`);
  });
});

describe('sluice acp: a long streamed answer does not deafen the session (PROTOCOL §8)', () => {
  test('§8 after a burst of updates the stdio client still gets every update, and those of later prompts', async () => {
    const { connection, log, workspace } = spawnAcp();
    await connection.agent.request('initialize', INITIALIZE);
    const { sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] });
    // The echo model answers with the prompt, in many small deltas published faster than a pipe
    // takes them: more than the bus queues for one reader (256).
    const long = 'lorem ipsum '.repeat(8_000);
    await connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: long }] });
    const after = await connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'after the burst' }],
    });
    expect(after).toEqual({ stopReason: 'end_turn' });
    const texts = log.updates.map((u) => (u.update as { content?: { text?: string } }).content?.text ?? '');
    expect(texts).toContain('after the burst');
    // The long answer arrived whole, each delta once (the echo model answers with the prompt).
    const end = texts.indexOf('after the burst');
    const answer = log.updates
      .slice(1, end)
      .filter((u) => u.update.sessionUpdate === 'agent_message_chunk')
      .map((u) => (u.update as { content: { text: string } }).content.text)
      .join('');
    expect(answer.length).toBe(`Echo: ${long}`.length);
    expect(answer).toBe(`Echo: ${long}`);
  });
});
