import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createQwenHome, installQwenAgent, qwenAgentEnv } from '../../../../scripts/qwen-agent.js';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { qwenScript } from '../helpers/qwen-upstream.js';

// The real `qwen --acp` agent (@qwen-code/qwen-code 0.24.4 on Node 22), installed by the test
// set-up and driven directly by the ACP SDK's client, with no Sluice in between: it proves the
// install, the scratch HOME and the environment make the agent work against our fake upstream,
// so a failure of the end-to-end test through Sluice is Sluice's. Installing needs the npm
// registry on first run; without it this fails with npm's message, it does not skip.

const MODEL = 'fake-qwen-model';
let upstream: FakeOpenAIServer;
let home: string;
let workspace: string;
let child: ChildProcessByStdio<Writable, Readable, Readable>;
let connection: acp.ClientConnection;
const updates: acp.SessionNotification[] = [];
const permissions: acp.RequestPermissionRequest[] = [];
const writes: acp.WriteTextFileRequest[] = [];

beforeAll(async () => {
  const agent = await installQwenAgent();
  upstream = await startFakeOpenAIServer({ reply: qwenScript });
  home = createQwenHome({ model: MODEL });
  workspace = mkdtempSync(join(tmpdir(), 'sluice-qwen-ws-'));
  const [node, ...args] = agent.command;
  child = spawn(node!, args, {
    cwd: workspace,
    env: qwenAgentEnv(home, { model: MODEL, baseURL: upstream.baseURL, apiKey: 'sk-direct-test' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr.resume(); // its own diagnostics (e.g. event-loop stall warnings under load)
  const app = acp
    .client({ name: 'sluice-qwen-smoke' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
    })
    .onRequest('session/request_permission', ({ params }) => {
      permissions.push(params);
      const allow = params.options.find((option) => option.kind === 'allow_once');
      return { outcome: { outcome: 'selected', optionId: allow!.optionId } };
    })
    .onRequest('fs/write_text_file', ({ params }) => {
      writes.push(params);
      writeFileSync(params.path, params.content);
      return {};
    })
    .onRequest('fs/read_text_file', ({ params }) => ({ content: readFileSync(params.path, 'utf8') }));
  connection = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );
}, 300_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await upstream?.close();
  for (const dir of [home, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (value: string): acp.ContentBlock[] => [{ type: 'text', text: value }];

function agentText(sessionId: string): string {
  return updates
    .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === 'agent_message_chunk')
    .map((n) => {
      const update = n.update as { content: { type: string; text?: string } };
      return update.content.type === 'text' ? (update.content.text ?? '') : '';
    })
    .join('');
}

describe('qwen --acp 0.24.4, installed by the test set-up, driven over stdio', () => {
  let sessionId: string;

  test('initialize advertises loadSession and session/new opens a session in the workspace', async () => {
    const init = await connection.agent.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    });
    expect(init).toMatchObject({
      protocolVersion: 1,
      agentInfo: { name: 'qwen-code', version: '0.24.4' },
      agentCapabilities: { loadSession: true },
    });
    ({ sessionId } = await connection.agent.request('session/new', { cwd: workspace, mcpServers: [] }));
    expect(sessionId).toEqual(expect.any(String));
  });

  test('a prompt streams the upstream text back and makes one streamed model call with our key', async () => {
    const before = upstream.requestCount;
    const answer = await connection.agent.request('session/prompt', {
      sessionId,
      prompt: text('hello qwen'),
    });
    expect(answer.stopReason).toBe('end_turn');
    expect(agentText(sessionId)).toBe('echo: hello qwen');
    // no background model calls outside the turn (memory extraction is off in the scratch HOME)
    expect(upstream.requestCount - before).toBe(1);
    const call = upstream.requests.at(-1)!;
    expect(call.body).toMatchObject({ model: MODEL, stream: true });
    expect(call.headers.authorization).toBe('Bearer sk-direct-test');
  });

  test('a write_file tool call asks session/request_permission; allowed, it writes through fs/write_text_file', async () => {
    const target = join(workspace, 'hello.txt');
    const answer = await connection.agent.request('session/prompt', {
      sessionId,
      prompt: text(`please [write ${target}]`),
    });
    expect(answer.stopReason).toBe('end_turn');
    expect(permissions.at(-1)).toMatchObject({ sessionId, toolCall: { kind: 'edit' } });
    expect(writes.at(-1)).toMatchObject({ path: target, content: 'written by qwen\n' });
    expect(readFileSync(target, 'utf8')).toBe('written by qwen\n');
    expect(agentText(sessionId)).toMatch(/tool done$/);
  });

  test('session/cancel ends a prompt whose model call hangs with stopReason cancelled', async () => {
    const before = upstream.requestCount;
    const answer = connection.agent.request('session/prompt', { sessionId, prompt: text('[hang]') });
    await expect.poll(() => upstream.requestCount).toBe(before + 1);
    await connection.agent.notify('session/cancel', { sessionId });
    expect((await answer).stopReason).toBe('cancelled');
  });
});
