import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  DaemonClient,
  DaemonPendingPromptLimitError,
  DaemonPromptLostError,
  DaemonProtocolError,
  DaemonSessionClient,
  DaemonStreamEndedError,
  isDaemonTurnError,
  type DaemonEvent,
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

// SPEC BP-14: DaemonSessionClient's long-lived subscription path.

const SID = 'sess';
const session = { sessionId: SID, workspaceCwd: '/w', attached: false, clientId: 'c1' };
let server: ScriptServer;

beforeAll(async () => {
  server = await startScriptServer();
});
afterAll(() => server.close());

interface Fake {
  stream?: ServerResponse;
  streams: ServerResponse[];
  posts: RecordedRequest[];
  eventGets: RecordedRequest[];
  deletes: RecordedRequest[];
  onPost?: (res: ServerResponse, n: number) => void;
}

function fake(): Fake {
  const state: Fake = { streams: [], posts: [], eventGets: [], deletes: [] };
  server.handle((request, res) => {
    if (request.method === 'GET' && request.url.startsWith(`/session/${SID}/events`)) {
      state.eventGets.push(request);
      openSse(res, 'ep');
      state.streams.push(res);
      if (state.stream === undefined) state.stream = res;
      return;
    }
    if (request.method === 'POST' && request.url === `/session/${SID}/prompt`) {
      state.posts.push(request);
      return state.onPost?.(res, state.posts.length);
    }
    if (request.method === 'DELETE') {
      state.deletes.push(request);
      return json(res, 200, { removed: true });
    }
    json(res, 404, { error: 'unscripted' });
  });
  return state;
}

/** Runs `events()` in the background, recording what it yields, until `stop` aborts it. */
async function listen(
  sc: DaemonSessionClient,
  stop: AbortController,
): Promise<{ events: DaemonEvent[]; done: Promise<void> }> {
  const events: DaemonEvent[] = [];
  let accepted = false;
  const done = (async () => {
    for await (const event of sc.events({
      signal: stop.signal,
      onSseStreamAccepted: () => (accepted = true),
    }))
      events.push(event);
  })();
  await until(() => accepted);
  return { events, done };
}

describe('BP-14 DaemonSessionClient', () => {
  test('BP-14 a terminal event that arrives before the 202 has been read is kept for its prompt', async () => {
    const state = fake();
    const client = new DaemonClient({ baseUrl: server.url });
    const sc = new DaemonSessionClient({ client, session, lastEventId: 0 });
    const stop = new AbortController();
    const listener = await listen(sc, stop);
    state.onPost = (res) => {
      // the turn ends (and reaches the client) before the client has its 202
      sendEvent(
        state.stream!,
        'turn_complete',
        { sessionId: SID, promptId: 'fast', stopReason: 'end_turn' },
        1,
        'fast',
      );
      void until(() => listener.events.some((e) => e.type === 'turn_complete')).then(() =>
        json(res, 202, { promptId: 'fast', lastEventId: 0, eventEpoch: 'ep' }),
      );
    };
    await expect(sc.prompt(text('quick'))).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(state.eventGets).toHaveLength(1); // the long-lived stream served it: no temporary one
    expect(sc.pendingPromptCount).toBe(0);
    expect(sc.lastEventId).toBe(1);
    expect(state.posts[0]!.headers['x-qwen-client-id']).toBe('c1');
    stop.abort();
    await listener.done;
  });

  test('BP-14 the local limit applies on the subscription path: the extra prompt is refused without a POST', async () => {
    const state = fake();
    state.onPost = (res, n) => json(res, 202, { promptId: `p${n}`, lastEventId: 0 });
    const client = new DaemonClient({ baseUrl: server.url, maxPendingPromptsPerSession: 5 });
    const sc = new DaemonSessionClient({ client, session, lastEventId: 0, maxPendingPromptsPerSession: 1 });
    const stop = new AbortController();
    const listener = await listen(sc, stop);
    const first = sc.prompt(text('one'));
    await until(() => state.posts.length === 1);
    const error: unknown = await sc.prompt(text('two')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DaemonPendingPromptLimitError);
    expect(error).toMatchObject({ limit: 1, pendingCount: 1, local: true });
    expect(state.posts).toHaveLength(1);
    sendEvent(
      state.stream!,
      'turn_complete',
      { sessionId: SID, promptId: 'p1', stopReason: 'end_turn' },
      1,
      'p1',
    );
    await expect(first).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(sc.pendingPromptCount).toBe(0);
    stop.abort();
    await listener.done;
  });

  test('BP-14 when the long-lived stream ends, a waiting prompt continues on its own stream from its 202 cursor', async () => {
    const state = fake();
    state.onPost = (res) => json(res, 202, { promptId: 'slow', lastEventId: 41, eventEpoch: 'ep' });
    const client = new DaemonClient({ baseUrl: server.url });
    const sc = new DaemonSessionClient({ client, session, lastEventId: 0 });
    const stop = new AbortController();
    const listener = await listen(sc, stop);
    const running = sc.prompt(text('slow'));
    await until(() => state.posts.length === 1);
    stop.abort();
    await listener.done;
    await until(() => state.streams.length === 2);
    expect(state.eventGets[1]!.headers['last-event-id']).toBe('41');
    expect(state.eventGets[1]!.headers['x-qwen-event-epoch']).toBe('ep');
    expect(sc.pendingPromptCount).toBe(1);
    sendEvent(
      state.streams[1]!,
      'turn_complete',
      { sessionId: SID, promptId: 'slow', stopReason: 'end_turn' },
      42,
      'slow',
    );
    await expect(running).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(sc.pendingPromptCount).toBe(0);
    state.streams[1]!.end();
  });

  test('BP-11 aborting a prompt on the subscription path removes it on the daemon and releases the slot', async () => {
    const state = fake();
    state.onPost = (res) => json(res, 202, { promptId: 'gone', lastEventId: 0 });
    const client = new DaemonClient({ baseUrl: server.url });
    const sc = new DaemonSessionClient({ client, session, lastEventId: 0 });
    const stop = new AbortController();
    const listener = await listen(sc, stop);
    const abort = new AbortController();
    const running = sc.prompt(text('never'), abort.signal);
    await until(() => state.posts.length === 1);
    await until(() => sc.pendingPromptCount === 1);
    // let the 202 be processed and the waiter registered
    await new Promise((resolve) => setImmediate(resolve));
    abort.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(sc.pendingPromptCount).toBe(0);
    expect(state.deletes.map((r) => r.url)).toEqual([`/session/${SID}/pending-prompts/gone`]);
    expect(state.deletes[0]!.headers['x-qwen-client-id']).toBe('c1');
    stop.abort();
    await listener.done;
  });

  test('BP-14 the static factories keep the reference positions: (client, request, clientId) and (client, id, request, clientId)', async () => {
    const seen: RecordedRequest[] = [];
    server.handle((request, res) => {
      seen.push(request);
      if (request.url === '/session')
        return json(res, 200, { sessionId: 'n1', workspaceCwd: '/w', attached: false, clientId: 'k1' });
      json(res, 200, {
        sessionId: 'n1',
        workspaceCwd: '/w',
        attached: true,
        clientId: 'k2',
        lastEventId: 9,
        eventEpoch: 'E',
      });
    });
    const client = new DaemonClient({ baseUrl: server.url });
    const created = await DaemonSessionClient.createOrAttach(
      client,
      { workspaceCwd: '/w', sessionScope: 'thread' },
      'mine',
    );
    expect(JSON.parse(seen[0]!.body)).toEqual({ cwd: '/w', sessionScope: 'thread' });
    expect(seen[0]!.headers['x-qwen-client-id']).toBe('mine');
    expect(created.clientId).toBe('k1');
    const limited = await DaemonSessionClient.createOrAttach(client, {}, { maxPendingPromptsPerSession: 3 });
    expect(limited.maxPendingPromptsPerSession).toBe(3);
    const resumed = await DaemonSessionClient.resume(client, 'n1', {}, 'mine');
    expect(seen[2]!.url).toBe('/session/n1/resume');
    expect([resumed.lastEventId, resumed.eventEpoch, resumed.clientId]).toEqual([9, 'E', 'k2']);
    const loaded = await DaemonSessionClient.load(client, 'n1');
    expect(seen[3]!.url).toBe('/session/n1/load');
    expect(loaded.lastEventId).toBe(0); // load replays the ring from its start
  });
});

// SPEC BP-11 on DaemonSessionClient's own prompt path (a long-lived events() stream is
// connected): the same release paths as DaemonClient.prompt(), one test each. A held prompt
// keeps one slot the whole time, so the path under test must take the count 2 → 1 (exactly one
// release), and the held prompt's own end 1 → 0.
describe('BP-11/BP-14 every release path on the subscription path gives the slot back exactly once', () => {
  interface Rig {
    state: Fake;
    sc: DaemonSessionClient;
    /** The long-lived stream's response, to write events to. */
    stream: ServerResponse;
    /** The held prompt ends with a fetch failure; the count must then be 0. */
    finish(): Promise<void>;
  }

  async function rig(onPost: (res: ServerResponse) => void): Promise<Rig> {
    const state = fake();
    const held: ServerResponse[] = [];
    state.onPost = (res, n) =>
      promptTextOf(state.posts[n - 1]!) === 'hold' ? void held.push(res) : onPost(res);
    // Destroying a held POST is how these tests end a prompt: no retry of a lost answer.
    const client = new DaemonClient({
      baseUrl: server.url,
      reconnect: false,
      maxPendingPromptsPerSession: 2,
      promptRetries: 0,
    });
    const sc = new DaemonSessionClient({ client, session, lastEventId: 0 });
    const stop = new AbortController();
    const listener = await listen(sc, stop);
    const hold = sc.prompt(text('hold')).catch((error: unknown) => error);
    await until(() => held.length === 1);
    expect(sc.pendingPromptCount).toBe(1);
    return {
      state,
      sc,
      stream: state.stream!,
      finish: async () => {
        expect(sc.pendingPromptCount).toBe(1);
        for (const res of held) res.destroy();
        await expect(hold).resolves.toBeInstanceOf(TypeError);
        expect(sc.pendingPromptCount).toBe(0);
        stop.abort();
        await listener.done;
        for (const res of state.streams) res.destroy();
      },
    };
  }

  /** Resolves once the prompt's 202 has been read and it waits on the long-lived stream. */
  const waitingOnStream = (sc: DaemonSessionClient, promptId: string): Promise<void> =>
    until(() => (sc as unknown as { waiters: Map<string, unknown> }).waiters.has(promptId));

  const accepted = (promptId: string) => (res: ServerResponse) =>
    json(res, 202, { promptId, lastEventId: 0, eventEpoch: 'ep' });

  test('BP-11/BP-14 blocking 200 completion releases once', async () => {
    const { sc, finish } = await rig((res) => json(res, 200, { stopReason: 'end_turn' }));
    await expect(sc.prompt(text('a'))).resolves.toEqual({ stopReason: 'end_turn' });
    await finish();
  });

  test('BP-11/BP-14 202 then turn_complete on the long-lived stream releases once', async () => {
    const { sc, stream, state, finish } = await rig(accepted('q1'));
    const running = sc.prompt(text('a'));
    await waitingOnStream(sc, 'q1');
    expect(sc.pendingPromptCount).toBe(2);
    sendEvent(stream, 'turn_complete', { sessionId: SID, promptId: 'q1', stopReason: 'end_turn' }, 1, 'q1');
    await expect(running).resolves.toMatchObject({ stopReason: 'end_turn', promptId: 'q1' });
    expect(state.eventGets).toHaveLength(1);
    await finish();
  });

  test('BP-11/BP-14 turn_error on the long-lived stream releases once and rejects with a turn error', async () => {
    const { sc, stream, finish } = await rig(accepted('q2'));
    const running = sc.prompt(text('a'));
    await waitingOnStream(sc, 'q2');
    sendEvent(
      stream,
      'turn_error',
      { sessionId: SID, promptId: 'q2', message: 'closed', code: 'session_closed' },
      1,
      'q2',
    );
    const error: unknown = await running.catch((e: unknown) => e);
    expect(isDaemonTurnError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'session_closed', promptId: 'q2' });
    await finish();
  });

  test('BP-11/BP-14 caller abort after the 202 releases once and removes the prompt on the daemon', async () => {
    const { sc, state, finish } = await rig(accepted('q3'));
    const abort = new AbortController();
    const running = sc.prompt(text('a'), abort.signal);
    await waitingOnStream(sc, 'q3');
    abort.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(state.deletes.map((r) => r.url)).toEqual([`/session/${SID}/pending-prompts/q3`]);
    await finish();
  });

  test('BP-11/BP-14 caller abort while the POST is unanswered releases once, then takes the 202 prompt back', async () => {
    let answer: (() => void) | undefined;
    const { sc, state, finish } = await rig((res) => {
      answer = () => json(res, 202, { promptId: 'q4', lastEventId: 0 });
    });
    const abort = new AbortController();
    const running = sc.prompt(text('a'), abort.signal);
    await until(() => answer !== undefined);
    abort.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(sc.pendingPromptCount).toBe(1);
    answer!();
    await until(() => state.deletes.some((r) => r.url === `/session/${SID}/pending-prompts/q4`));
    await finish();
  });

  test('BP-11/BP-14 the long-lived stream ending, then the prompt’s own stream ending, releases once', async () => {
    const { sc, state, stream, finish } = await rig(accepted('q5'));
    const running = sc.prompt(text('a'));
    await waitingOnStream(sc, 'q5');
    stream.end();
    await until(() => state.streams.length === 2);
    state.streams[1]!.end();
    await expect(running).rejects.toBeInstanceOf(DaemonStreamEndedError);
    await finish();
  });

  test('BP-11/BP-14 a bus reset on the long-lived stream whose replay lacks the prompt releases once with DaemonPromptLostError', async () => {
    const { sc, stream, finish } = await rig(accepted('q6'));
    const running = sc.prompt(text('a'));
    await waitingOnStream(sc, 'q6');
    sendEvent(stream, 'state_resync_required', {
      reason: 'epoch_reset',
      lastDeliveredId: 0,
      earliestAvailableId: 1,
    });
    sendEvent(stream, 'replay_complete', { replayedCount: 0 });
    await expect(running).rejects.toBeInstanceOf(DaemonPromptLostError);
    await finish();
  });

  test('BP-11/BP-14 a fetch failure releases once', async () => {
    const { sc, finish } = await rig((res) => res.socket?.destroy());
    await expect(sc.prompt(text('a'))).rejects.toBeInstanceOf(TypeError);
    await finish();
  });

  test('BP-11/BP-14 an unreadable 202 body releases once', async () => {
    const { sc, finish } = await rig((res) => {
      res.writeHead(202, { 'Content-Type': 'application/json' });
      res.end('{"promptId": ');
    });
    await expect(sc.prompt(text('a'))).rejects.toBeInstanceOf(DaemonProtocolError);
    await finish();
  });

  test('BP-11/BP-14 a server 503 prompt_queue_full releases once with the server figures', async () => {
    const { sc, finish } = await rig((res) =>
      json(
        res,
        503,
        { error: 'full', code: 'prompt_queue_full', sessionId: SID, limit: 5, pendingCount: 5 },
        { 'Retry-After': '5' },
      ),
    );
    await expect(sc.prompt(text('a'))).rejects.toMatchObject({
      name: 'DaemonPendingPromptLimitError',
      local: false,
      limit: 5,
      pendingCount: 5,
      retryAfterMs: 5000,
    });
    await finish();
  });
});
