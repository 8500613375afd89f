import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  DaemonClient,
  DaemonPendingPromptLimitError,
  DaemonPromptLostError,
  DaemonProtocolError,
  DaemonStreamEndedError,
  isDaemonTurnError,
} from '../src/index.js';
import {
  json,
  openSse,
  promptTextOf,
  sendEvent,
  startScriptServer,
  text,
  until,
  type RecordedRequest,
  type ScriptServer,
} from './helpers/script-server.js';

// One release path per test (SPEC BP-11): a second prompt ("hold") keeps its slot the whole
// time, so the counter must go 2 → 1 when the path under test releases — exactly one
// decrement — and 1 → 0 once the held prompt ends.

const SID = 's1';
let server: ScriptServer;
let held: ServerResponse[] = [];

beforeAll(async () => {
  server = await startScriptServer();
});
afterAll(() => server.close());
afterEach(() => {
  for (const res of held) res.destroy();
  held = [];
});

type PromptScript = (request: RecordedRequest, res: ServerResponse) => void;
type EventsScript = (request: RecordedRequest, res: ServerResponse) => void;

function script(onPrompt: PromptScript, onEvents: EventsScript = () => {}): void {
  server.handle((request, res) => {
    if (request.method === 'POST' && request.url === `/session/${SID}/prompt`) {
      if (promptTextOf(request) === 'hold') return void held.push(res);
      return onPrompt(request, res);
    }
    if (request.method === 'GET' && request.url.startsWith(`/session/${SID}/events`))
      return onEvents(request, res);
    if (request.method === 'DELETE' && request.url.startsWith(`/session/${SID}/pending-prompts/`))
      return json(res, 200, { removed: true });
    json(res, 404, { error: 'unscripted' });
  });
}

const accepted = (promptId: string) => (_: RecordedRequest, res: ServerResponse) =>
  json(res, 202, { promptId, lastEventId: 7, eventEpoch: 'epoch-1' });

/** Starts the held prompt and waits until the server holds it: the counter is then 1. */
async function holdOne(client: DaemonClient): Promise<{ ended: Promise<unknown> }> {
  const before = held.length;
  const hold = client.prompt(SID, text('hold')).catch((error: unknown) => error);
  await until(() => held.length > before);
  expect(client.pendingPromptCount(SID)).toBe(1);
  return { ended: hold };
}

/** The held prompt ends with a fetch failure; its own release brings the counter to 0. */
async function endHold(client: DaemonClient, hold: { ended: Promise<unknown> }): Promise<void> {
  for (const res of held) res.destroy();
  await expect(hold.ended).resolves.toBeInstanceOf(TypeError);
  expect(client.pendingPromptCount(SID)).toBe(0);
}

/** A client whose lost prompt answers are not retried: destroying a held POST ends its prompt. */
function newClient(): DaemonClient {
  return new DaemonClient({
    baseUrl: server.url,
    maxPendingPromptsPerSession: 2,
    reconnect: false,
    promptRetries: 0,
  });
}

describe('BP-11 every release path gives the slot back exactly once', () => {
  test('BP-11 blocking 200 completion releases once', async () => {
    script((_, res) => json(res, 200, { stopReason: 'end_turn' }));
    const client = newClient();
    const hold = await holdOne(client);
    await expect(client.prompt(SID, text('a'))).resolves.toEqual({ stopReason: 'end_turn' });
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });

  test('BP-11 202 then turn_complete on the stream releases once', async () => {
    script(accepted('p1'), (request, res) => {
      expect(request.headers['last-event-id']).toBe('7');
      expect(request.headers['x-qwen-event-epoch']).toBe('epoch-1');
      openSse(res);
      sendEvent(res, 'turn_complete', { sessionId: SID, promptId: 'p1', stopReason: 'end_turn' }, 8, 'p1');
    });
    const client = newClient();
    const hold = await holdOne(client);
    const running = client.prompt(SID, text('a'));
    await until(() => client.pendingPromptCount(SID) === 2);
    await expect(running).resolves.toMatchObject({ stopReason: 'end_turn', promptId: 'p1' });
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });

  test('BP-11 turn_error releases once and rejects with a turn error', async () => {
    script(accepted('p2'), (_, res) => {
      openSse(res);
      sendEvent(
        res,
        'turn_error',
        { sessionId: SID, promptId: 'p2', message: 'too late', code: 'prompt_deadline_exceeded' },
        8,
        'p2',
      );
    });
    const client = newClient();
    const hold = await holdOne(client);
    const error: unknown = await client.prompt(SID, text('a')).catch((e: unknown) => e);
    expect(isDaemonTurnError(error)).toBe(true);
    expect(error).toMatchObject({ status: 504, code: 'prompt_deadline_exceeded', promptId: 'p2' });
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });

  test('BP-11 caller abort after the 202 releases once and removes the prompt on the daemon', async () => {
    let streamOpen = false;
    script(accepted('p3'), (_, res) => {
      openSse(res);
      held.push(res);
      streamOpen = true;
    });
    const client = newClient();
    const hold = await holdOne(client);
    const abort = new AbortController();
    const running = client.prompt(SID, text('a'), abort.signal);
    await until(() => streamOpen);
    abort.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(client.pendingPromptCount(SID)).toBe(1);
    expect(
      server.requests.some((r) => r.method === 'DELETE' && r.url === `/session/${SID}/pending-prompts/p3`),
    ).toBe(true);
    await endHold(client, hold);
  });

  test('BP-11 caller abort while the POST is unanswered releases once, then takes the 202 prompt back', async () => {
    let answer: (() => void) | undefined;
    script((_, res) => {
      answer = () => json(res, 202, { promptId: 'p4', lastEventId: 7 });
    });
    const client = newClient();
    const hold = await holdOne(client);
    const abort = new AbortController();
    const running = client.prompt(SID, text('a'), abort.signal);
    await until(() => answer !== undefined);
    abort.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(client.pendingPromptCount(SID)).toBe(1);
    answer!();
    await until(() =>
      server.requests.some((r) => r.method === 'DELETE' && r.url === `/session/${SID}/pending-prompts/p4`),
    );
    await endHold(client, hold);
  });

  test('BP-11 the event stream ending without a terminal event releases once', async () => {
    script(accepted('p5'), (_, res) => {
      openSse(res);
      sendEvent(
        res,
        'session_update',
        { sessionId: SID, update: { sessionUpdate: 'agent_message_chunk' } },
        8,
        'p5',
      );
      res.end();
    });
    const client = newClient();
    const hold = await holdOne(client);
    await expect(client.prompt(SID, text('a'))).rejects.toBeInstanceOf(DaemonStreamEndedError);
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });

  test('BP-11 a bus reset (epoch_reset) whose replay lacks the prompt releases once with DaemonPromptLostError', async () => {
    script(accepted('p6'), (request, res) => {
      expect(request.headers['x-qwen-event-epoch']).toBe('epoch-1');
      openSse(res, 'epoch-2');
      sendEvent(res, 'state_resync_required', {
        reason: 'epoch_reset',
        lastDeliveredId: 7,
        earliestAvailableId: 1,
      });
      sendEvent(
        res,
        'turn_complete',
        { sessionId: SID, promptId: 'someone-else', stopReason: 'end_turn' },
        1,
        'someone-else',
      );
      sendEvent(res, 'replay_complete', { replayedCount: 1 });
      held.push(res);
    });
    const client = newClient();
    const hold = await holdOne(client);
    await expect(client.prompt(SID, text('a'))).rejects.toBeInstanceOf(DaemonPromptLostError);
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });

  test('BP-11 a fetch failure releases once', async () => {
    script((_, res) => res.socket?.destroy());
    const client = newClient();
    const hold = await holdOne(client);
    await expect(client.prompt(SID, text('a'))).rejects.toBeInstanceOf(TypeError);
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });

  test('BP-11 a fetch failure on every retry releases once, after sending the same key each time', async () => {
    const keys: unknown[] = [];
    script((request, res) => {
      keys.push(request.headers['idempotency-key']);
      res.socket?.destroy();
    });
    const client = new DaemonClient({
      baseUrl: server.url,
      maxPendingPromptsPerSession: 2,
      reconnect: false,
    });
    await expect(client.prompt(SID, text('a'))).rejects.toBeInstanceOf(TypeError);
    expect(client.pendingPromptCount(SID)).toBe(0);
    expect(keys).toHaveLength(3); // the first try and two retries
    expect(new Set(keys).size).toBe(1);
  });

  test('BP-11 an unreadable 202 body releases once', async () => {
    script((_, res) => {
      res.writeHead(202, { 'Content-Type': 'application/json' });
      res.end('{"promptId": ');
    });
    const client = newClient();
    const hold = await holdOne(client);
    await expect(client.prompt(SID, text('a'))).rejects.toBeInstanceOf(DaemonProtocolError);
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });

  test('BP-11 a server 503 prompt_queue_full releases once and carries the server figures', async () => {
    script((_, res) =>
      json(
        res,
        503,
        { error: 'full', code: 'prompt_queue_full', sessionId: SID, limit: 5, pendingCount: 5 },
        { 'Retry-After': '5' },
      ),
    );
    const client = newClient();
    const hold = await holdOne(client);
    const error: unknown = await client.prompt(SID, text('a')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DaemonPendingPromptLimitError);
    expect(error).toMatchObject({
      sessionId: SID,
      limit: 5,
      pendingCount: 5,
      local: false,
      retryAfterMs: 5000,
    });
    expect(client.pendingPromptCount(SID)).toBe(1);
    await endHold(client, hold);
  });
});

describe('BP-12 a local refusal sends nothing', () => {
  test('BP-12 the limit+1st prompt is refused locally with the local figures and no request', async () => {
    script((_, res) => json(res, 500, { error: 'must not be called' }));
    const client = new DaemonClient({
      baseUrl: server.url,
      maxPendingPromptsPerSession: 1,
      promptRetries: 0,
    });
    const hold = await holdOne(client);
    const before = server.requests.length;
    const error: unknown = await client.prompt(SID, text('refused')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DaemonPendingPromptLimitError);
    expect(error).toMatchObject({ sessionId: SID, limit: 1, pendingCount: 1, local: true });
    expect(server.requests.length).toBe(before);
    // another session of the same client is not affected
    expect(client.pendingPromptCount('other')).toBe(0);
    await endHold(client, hold);
  });

  test('BP-6 a pre-aborted signal is rejected before the counter moves and sends nothing', async () => {
    const client = newClient();
    const before = server.requests.length;
    const abort = new AbortController();
    abort.abort();
    await expect(client.prompt(SID, text('x'), abort.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(client.pendingPromptCount(SID)).toBe(0);
    expect(server.requests.length).toBe(before);
  });
});
