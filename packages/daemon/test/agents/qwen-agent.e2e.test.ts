import { readdirSync, readFileSync, realpathSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonClient, DaemonPendingPromptLimitError, type DaemonEvent } from '@qwen-code/sdk/daemon';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createQwenHome, installQwenAgent } from '../../../../scripts/qwen-agent.js';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { qwenScript } from '../helpers/qwen-upstream.js';
import { startQwenSluice } from '../helpers/qwen-sluice.js';
import type { SluiceProcess } from '../helpers/sluice-process.js';

// Issue 18, Acceptance — the real agent, end to end: `sluice serve --agent "qwen --acp"` with
// @qwen-code/qwen-code 0.24.4 (on the Node 22 the test set-up installs next to it), the
// daemon's model gateway in front of a fake OpenAI upstream, and the official @qwen-code/sdk
// 0.1.14 client driving the daemon. Every model call the agent makes goes through the gateway
// and the model runtime. Installing needs the npm registry on first run; without it this
// fails with npm's message — it never skips.

const MODEL = 'fake-qwen-model';
let upstream: FakeOpenAIServer;
let sluice: SluiceProcess;
let client: DaemonClient;
let home: string;
let workspace: string;
/** Sessions (each on its own agent process): one to chat on, one to fill, one whose process dies. */
let chat: string;
let busy: string;
let victim: string;
let victimPid: number;

beforeAll(async () => {
  const agent = await installQwenAgent();
  upstream = await startFakeOpenAIServer({ reply: qwenScript });
  home = createQwenHome({ model: MODEL });
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-qwen-ws-')));
  sluice = await startQwenSluice(
    { workspace, agent: agent.command, home, model: MODEL, upstream },
    // One session per process, the default before issue 27, which these tests pin.
    ['--agent-sessions-per-process', '1'],
  );
  client = new DaemonClient({ baseUrl: sluice.url });
  // One agent process per session (the default): the victim's is the only one when it opens.
  victim = await newSession();
  victimPid = agentPids()[0]!;
  [chat, busy] = await Promise.all([newSession(), newSession()]);
}, 300_000);

afterAll(async () => {
  await sluice?.stop();
  await upstream?.close();
  for (const dir of [home, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (value: string) => ({ prompt: [{ type: 'text' as const, text: value }] });

async function newSession(): Promise<string> {
  const session = await client.createOrAttachSession({ workspaceCwd: workspace, sessionScope: 'thread' });
  return session.sessionId;
}

/** A prompt's events as the official client reads them, up to its terminal event. */
interface Turn {
  promptId: string;
  events: DaemonEvent[];
  terminal: DaemonEvent;
  /** The agent's text of the turn, from its agent_message_chunk updates. */
  text: string;
}

async function startTurn(
  sessionId: string,
  prompt: string,
): Promise<{ promptId: string; done: Promise<Turn> }> {
  const accepted = await client.promptNonBlocking(sessionId, text(prompt));
  const { promptId, lastEventId } = accepted as { promptId: string; lastEventId: number };
  const done = (async (): Promise<Turn> => {
    const abort = new AbortController();
    const events: DaemonEvent[] = [];
    for await (const event of client.subscribeEvents(sessionId, { lastEventId, signal: abort.signal })) {
      if (event.promptId !== promptId && (event.data as { promptId?: string }).promptId !== promptId)
        continue;
      events.push(event);
      if (event.type === 'turn_complete' || event.type === 'turn_error') break;
    }
    abort.abort();
    return { promptId, events, terminal: events.at(-1)!, text: agentText(events) };
  })();
  return { promptId, done };
}

/** Reads a session's events from its start with the official client; `next` finds one. */
function watch(sessionId: string): {
  next(match: (e: DaemonEvent) => boolean): Promise<DaemonEvent>;
  close(): void;
} {
  const abort = new AbortController();
  const seen: DaemonEvent[] = [];
  const waiters = new Set<() => void>();
  void (async () => {
    try {
      for await (const event of client.subscribeEvents(sessionId, { lastEventId: 0, signal: abort.signal })) {
        seen.push(event);
        for (const wake of [...waiters]) wake();
      }
    } catch {
      // closed
    }
  })();
  return {
    next: (match) =>
      new Promise((resolve) => {
        const check = (): void => {
          const found = seen.find(match);
          if (found === undefined) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      }),
    close: () => abort.abort(),
  };
}

function agentText(events: DaemonEvent[]): string {
  return events
    .map((e) => (e.data as { update?: { sessionUpdate?: string; content?: { text?: string } } }).update)
    .filter((u) => u?.sessionUpdate === 'agent_message_chunk')
    .map((u) => u?.content?.text ?? '')
    .join('');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the routes under test
async function json(path: string): Promise<any> {
  const res = await fetch(`${sluice.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

/** Pids of the `qwen --acp` processes the daemon runs. */
function agentPids(): number[] {
  const pid = sluice.child.pid!;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === pid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('--acp');
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

describe('sluice serve --agent "qwen --acp" (0.24.4), driven by the official @qwen-code/sdk client', () => {
  test("a prompt's text comes from the real agent; its model call is in /runtime/snapshot while in flight and in the journal with the session id", async () => {
    const sessionId = chat;
    const turn = await startTurn(sessionId, 'hello through sluice [slow 1000]');
    // in flight: the gateway call of this session and prompt is a job of the model runtime
    await expect
      .poll(async () => (await json('/runtime/snapshot')).jobs, { timeout: 10_000 })
      .toContainEqual(expect.objectContaining({ sessionId, turnId: turn.promptId }));
    const done = await turn.done;
    expect(done.terminal).toMatchObject({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
    expect(done.text).toBe('echo: hello through sluice [slow 1000]');
    // the journal has the prompt's call, attributed to the session, with its result
    const { calls } = await json(`/session/${sessionId}/prompts/${turn.promptId}/calls`);
    expect(calls).toEqual([expect.objectContaining({ model: MODEL, kind: 'stream', outcome: 'success' })]);
    // the upstream saw the agent's own request (its 17 tools), sent on by the gateway
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-upstream');
    expect((sent.body.tools as unknown[]).length).toBeGreaterThan(10);
  });

  test('BP-1/BP-8 the 6th outstanding prompt gets 503; cancel reaches the agent and aborts its model call', async () => {
    const sessionId = busy;
    const running = await startTurn(sessionId, '[hang]');
    await expect
      .poll(async () => (await json('/runtime/snapshot')).jobs, { timeout: 10_000 })
      .toContainEqual(expect.objectContaining({ sessionId, turnId: running.promptId }));
    const queued = [];
    for (let i = 0; i < 4; i++) queued.push(await startTurn(sessionId, `queued ${i}`));
    // the SDK without a local limit sends the 6th; the daemon refuses it
    const unlimited = new DaemonClient({ baseUrl: sluice.url, maxPendingPromptsPerSession: null });
    const refused = unlimited.prompt(sessionId, text('one too many'));
    await expect(refused).rejects.toBeInstanceOf(DaemonPendingPromptLimitError);
    await expect(refused).rejects.toMatchObject({ sessionId, limit: 5, pendingCount: 5 });
    const raw = await fetch(`${sluice.url}/session/${sessionId}/prompt`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(text('still too many')),
    });
    expect(raw.status).toBe(503);
    expect(raw.headers.get('retry-after')).toBe('5');

    await client.cancel(sessionId);
    const cancelled = await running.done;
    expect(cancelled.terminal).toMatchObject({ type: 'turn_complete', data: { stopReason: 'cancelled' } });
    // the agent dropped its model call: the runtime recorded it as ended, not successful
    const calls = async () => (await json(`/session/${sessionId}/prompts/${running.promptId}/calls`)).calls;
    await expect.poll(calls).toEqual([
      expect.objectContaining({
        outcome: 'error',
        error: expect.objectContaining({ code: 'model_cancelled' }),
      }),
    ]);
    // the queue drains on the same agent session
    for (const [i, turn] of queued.entries()) {
      const done = await turn.done;
      expect(done.terminal).toMatchObject({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
      expect(done.text).toBe(`echo: queued ${i}`);
    }
  });

  test('a tool call that needs permission reaches the client as permission_request; the vote lets the agent write the file', async () => {
    const sessionId = chat;
    const target = join(workspace, 'voted.txt');
    const turn = await startTurn(sessionId, `please [write ${target}]`);
    const watching = watch(sessionId);
    const request = await watching.next(({ type }) => type === 'permission_request');
    watching.close();
    const data = request.data as {
      requestId: string;
      toolCall: { kind?: string };
      options: { optionId: string; kind: string }[];
    };
    expect(data.toolCall.kind).toBe('edit');
    const allow = data.options.find((o) => o.kind === 'allow_once')!;
    await expect(
      client.respondToPermission(data.requestId, {
        outcome: { outcome: 'selected', optionId: allow.optionId },
      }),
    ).resolves.toBe(true);
    const done = await turn.done;
    expect(done.terminal).toMatchObject({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
    expect(done.text).toBe('tool done');
    // the agent wrote through Sluice's fs/write_text_file, inside the workspace
    expect(readFileSync(target, 'utf8')).toBe('written by qwen\n');
    const { calls } = await json(`/session/${sessionId}/prompts/${turn.promptId}/calls`);
    expect(calls.map((c: { toolCalls?: string[] }) => c.toolCalls)).toEqual([['write_file'], undefined]);
  });

  test('an upstream failure ends the prompt with turn_error and is journaled as the failed call', async () => {
    const turn = await (await startTurn(chat, 'break [fail 400]')).done;
    expect(turn.terminal).toMatchObject({ type: 'turn_error', data: { code: 'agent_error' } });
    expect((turn.terminal.data as { message: string }).message).toContain('scripted failure 400');
    const { calls } = await json(`/session/${chat}/prompts/${turn.promptId}/calls`);
    expect(calls).toEqual([expect.objectContaining({ outcome: 'error' })]);
  });

  test('kill -9 of one agent process ends only its session’s prompt; the other answers; the next prompt recovers', async () => {
    expect(agentPids()).toHaveLength(3);
    const other = await startTurn(chat, 'still here [slow 2500]');
    const watching = watch(victim);
    const doomed = await startTurn(victim, '[hang]');
    // both sessions have a model call in flight when the victim's agent process is killed
    const inFlight = async () =>
      ((await json('/runtime/snapshot')).jobs as { turnId?: string }[]).map((job) => job.turnId);
    await expect
      .poll(inFlight, { timeout: 10_000 })
      .toEqual(expect.arrayContaining([other.promptId, doomed.promptId]));
    process.kill(victimPid, 'SIGKILL');

    const died = await doomed.done;
    expect(died.terminal).toMatchObject({ type: 'turn_error', data: { code: 'agent_crashed' } });
    await expect(watching.next(({ type }) => type === 'session_died')).resolves.toMatchObject({
      data: { sessionId: victim, code: 'agent_crashed', recoverable: true },
    });
    watching.close();
    // the session's next prompt runs on a fresh agent process, while the other one answers
    const recovering = await startTurn(victim, 'after the crash');
    const survived = await other.done;
    expect(survived.terminal).toMatchObject({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
    expect(survived.text).toBe('echo: still here [slow 2500]');
    const recovered = await recovering.done;
    expect(recovered.terminal).toMatchObject({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
    expect(recovered.text).toBe('echo: after the crash');
    expect(agentPids()).not.toContain(victimPid);
    expect(agentPids()).toHaveLength(3);
  });
});
