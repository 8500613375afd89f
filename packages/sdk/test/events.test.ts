import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { DaemonClient, DaemonHttpError, DaemonProtocolError, type DaemonEvent } from '../src/index.js';
import type * as AbortModule from '../src/abort.js';
import { readEventStream } from '../src/sse.js';
import {
  json,
  openSse,
  sendEvent,
  startScriptServer,
  type RecordedRequest,
  type ScriptServer,
} from './helpers/script-server.js';

// PROTOCOL §6 as the SDK sees it: resume, epochs, reconnect with backoff, frame validation.

// The reconnect waits go through abort.ts's sleep: recorded here, and skipped (0 ms) when a
// test asks, so a Retry-After can be checked without waiting it out.
const waits = vi.hoisted(() => ({ delays: [] as number[], skip: false }));
vi.mock('../src/abort.js', async (importOriginal) => {
  const actual = await importOriginal<typeof AbortModule>();
  return {
    ...actual,
    sleep: (ms: number, signal?: AbortSignal) => {
      waits.delays.push(ms);
      return actual.sleep(waits.skip ? 0 : ms, signal);
    },
  };
});
afterEach(() => {
  waits.delays.length = 0;
  waits.skip = false;
  vi.restoreAllMocks();
});

let server: ScriptServer;
beforeAll(async () => {
  server = await startScriptServer();
});
afterAll(() => server.close());

const fastReconnect = { maxAttempts: 3, baseMs: 1, capMs: 5 };
const update = (n: number) => ({ sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', n } });

async function collect(stream: AsyncGenerator<DaemonEvent>, max = 100): Promise<DaemonEvent[]> {
  const events: DaemonEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (events.length >= max) break;
  }
  return events;
}

describe('subscribeEvents', () => {
  test('§6 sends Last-Event-ID and the epoch, reports the epoch, and drops frames that are not v:1 envelopes', async () => {
    const seen: RecordedRequest[] = [];
    server.handle((request, res) => {
      seen.push(request);
      openSse(res, 'epoch-A');
      sendEvent(res, 'session_update', update(1), 5);
      res.write('event: junk\ndata: {"v":2,"type":"x","data":{}}\n\n');
      res.write('event: junk\ndata: not json\n\n');
      res.write('event: junk\ndata: {"v":1,"type":"x","id":1.5,"data":{}}\n\n');
      sendEvent(res, 'replay_complete', { replayedCount: 1 });
      sendEvent(res, 'session_closed', { sessionId: 's', reason: 'client_close' }, 6);
      res.end();
    });
    const epochs: string[] = [];
    const client = new DaemonClient({ baseUrl: server.url });
    const events = await collect(
      client.subscribeEvents('s', {
        lastEventId: 4,
        epoch: 'epoch-old',
        onEpoch: (e) => epochs.push(e),
        clientId: 'c1',
      }),
    );
    expect(events.map((e) => [e.type, e.id])).toEqual([
      ['session_update', 5],
      ['replay_complete', undefined],
      ['session_closed', 6],
    ]);
    expect(seen).toHaveLength(1); // session_closed ends the iteration: no reconnect
    expect(seen[0]!.headers['last-event-id']).toBe('4');
    expect(seen[0]!.headers['x-qwen-event-epoch']).toBe('epoch-old');
    expect(seen[0]!.headers['x-qwen-client-id']).toBe('c1');
    expect(epochs).toEqual(['epoch-A']);
  });

  test('§6 without a cursor the stream is live only: no Last-Event-ID, no epoch header', async () => {
    const seen: RecordedRequest[] = [];
    server.handle((request, res) => {
      seen.push(request);
      openSse(res);
      sendEvent(res, 'session_closed', { sessionId: 's' }, 1);
      res.end();
    });
    await collect(new DaemonClient({ baseUrl: server.url }).subscribeEvents('s', { epoch: 'ignored' }));
    expect(seen[0]!.headers['last-event-id']).toBeUndefined();
    expect(seen[0]!.headers['x-qwen-event-epoch']).toBeUndefined();
  });

  test('§6 a stream the daemon ends re-opens from the last id seen with the epoch it learned', async () => {
    const seen: RecordedRequest[] = [];
    server.handle((request, res) => {
      seen.push(request);
      openSse(res, 'epoch-B');
      if (seen.length === 1) {
        sendEvent(res, 'session_update', update(1), 10);
        sendEvent(res, 'session_update', update(2), 11);
        return void res.end();
      }
      sendEvent(res, 'session_update', update(3), 12);
      sendEvent(res, 'session_closed', { sessionId: 's' }, 13);
      res.end();
    });
    const client = new DaemonClient({ baseUrl: server.url, reconnect: fastReconnect });
    const events = await collect(client.subscribeEvents('s', { lastEventId: 9 }));
    expect(events.map((e) => e.id)).toEqual([10, 11, 12, 13]);
    expect(seen.map((r) => r.headers['last-event-id'])).toEqual(['9', '11']);
    expect(seen[1]!.headers['x-qwen-event-epoch']).toBe('epoch-B');
  });

  test('§6 a connection that goes silent past idleTimeoutMs is re-opened from the last id; heartbeats keep one alive', async () => {
    const seen: RecordedRequest[] = [];
    const silent: ServerResponse[] = [];
    server.handle((request, res) => {
      seen.push(request);
      openSse(res);
      if (seen.length === 1) {
        sendEvent(res, 'session_update', update(1), 20);
        silent.push(res); // a frozen daemon or a peer lost behind a proxy: open, but nothing comes
        return;
      }
      // a quiet but live connection: heartbeats only, for longer than the idle timeout
      const beat = setInterval(() => res.write(': heartbeat\n\n'), 20);
      setTimeout(() => {
        clearInterval(beat);
        sendEvent(res, 'session_closed', { sessionId: 's' }, 21);
        res.end();
      }, 300);
    });
    const client = new DaemonClient({
      baseUrl: server.url,
      reconnect: { ...fastReconnect, idleTimeoutMs: 100 },
    });
    const events = await collect(client.subscribeEvents('s', { lastEventId: 19 }));
    for (const res of silent) res.destroy();
    expect(events.map((e) => e.id)).toEqual([20, 21]);
    expect(seen.map((r) => r.headers['last-event-id'])).toEqual(['19', '20']);
  });

  test('§6 idleTimeoutMs must be a whole number of ms a timer can wait', () => {
    for (const idleTimeoutMs of [-1, 1.5, 2 ** 31, Number.NaN]) {
      expect(() => new DaemonClient({ baseUrl: server.url, reconnect: { idleTimeoutMs } })).toThrow(
        `reconnect.idleTimeoutMs must be an integer number of milliseconds in [0, 2147483647], got ${String(idleTimeoutMs)}`,
      );
    }
  });

  test('§6 client_evicted is followed by a resume from droppedAfter', async () => {
    const seen: RecordedRequest[] = [];
    server.handle((request, res) => {
      seen.push(request);
      openSse(res);
      if (seen.length === 1) {
        sendEvent(res, 'session_update', update(1), 3);
        sendEvent(res, 'client_evicted', { reason: 'queue_overflow', droppedAfter: 3 });
        return void res.end();
      }
      sendEvent(res, 'session_closed', { sessionId: 's' }, 4);
      res.end();
    });
    const client = new DaemonClient({ baseUrl: server.url, reconnect: fastReconnect });
    const events = await collect(client.subscribeEvents('s', { lastEventId: 0 }));
    expect(events.map((e) => e.type)).toEqual(['session_update', 'client_evicted', 'session_closed']);
    expect(seen[1]!.headers['last-event-id']).toBe('3');
  });

  test('§6 a 503 with Retry-After is retried; a 404 is thrown as DaemonHttpError with its code', async () => {
    let calls = 0;
    server.handle((_, res) => {
      calls++;
      if (calls === 1)
        return json(res, 503, { error: 'busy', code: 'subscriber_limit_exceeded' }, { 'Retry-After': '0' });
      if (calls === 2) {
        openSse(res);
        sendEvent(res, 'session_update', update(1), 1);
        return void res.end();
      }
      json(res, 404, { error: 'No session with id "s"', code: 'session_not_found', sessionId: 's' });
    });
    const client = new DaemonClient({ baseUrl: server.url, reconnect: fastReconnect });
    const events: DaemonEvent[] = [];
    const error = await (async () => {
      for await (const event of client.subscribeEvents('s', { lastEventId: 0 })) events.push(event);
    })().catch((e: unknown) => e);
    expect(events.map((e) => e.id)).toEqual([1]);
    expect(error).toBeInstanceOf(DaemonHttpError);
    expect(error).toMatchObject({ status: 404, code: 'session_not_found' });
    expect(calls).toBe(3);
  });

  test('§6 a 429 subscriber_limit_exceeded is retried after its Retry-After plus jitter, not at the same instant as everyone else', async () => {
    let calls = 0;
    server.handle((_, res) => {
      if (++calls === 1)
        return json(res, 429, { error: 'busy', code: 'subscriber_limit_exceeded' }, { 'Retry-After': '1' });
      openSse(res);
      sendEvent(res, 'session_closed', { sessionId: 's' }, 1);
      res.end();
    });
    waits.skip = true;
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const client = new DaemonClient({
      baseUrl: server.url,
      reconnect: { maxAttempts: 3, baseMs: 100, capMs: 5_000 },
    });
    const events = await collect(client.subscribeEvents('s', { lastEventId: 0 }));
    expect(events.map((e) => e.type)).toEqual(['session_closed']);
    expect(waits.delays).toEqual([1_000 + 50]); // Retry-After + U[0, baseMs·2^0)
  });

  test('§6 reconnect attempts are bounded: a stream that keeps failing ends with the connection error', async () => {
    let calls = 0;
    server.handle((_, res) => {
      calls++;
      res.socket?.destroy();
    });
    const client = new DaemonClient({
      baseUrl: server.url,
      reconnect: { maxAttempts: 2, baseMs: 1, capMs: 2 },
    });
    await expect(collect(client.subscribeEvents('s', { lastEventId: 0 }))).rejects.toBeInstanceOf(TypeError);
    expect(calls).toBe(3);
  });

  test('§6 a non-SSE 200 is a protocol error, not an empty stream', async () => {
    server.handle((_, res) => json(res, 200, { hello: 'proxy' }));
    const client = new DaemonClient({ baseUrl: server.url });
    await expect(collect(client.subscribeEvents('s'))).rejects.toBeInstanceOf(DaemonProtocolError);
  });

  test('§6 aborting the signal ends the iteration quietly and closes the connection', async () => {
    let open: ServerResponse | undefined;
    let closed = false;
    server.handle((_, res) => {
      open = res;
      res.on('close', () => (closed = true));
      openSse(res);
      sendEvent(res, 'session_update', update(1), 1);
    });
    const abort = new AbortController();
    const client = new DaemonClient({ baseUrl: server.url });
    const events: DaemonEvent[] = [];
    for await (const event of client.subscribeEvents('s', { signal: abort.signal })) {
      events.push(event);
      abort.abort();
    }
    expect(events).toHaveLength(1);
    expect(open).toBeDefined();
    await new Promise<void>((resolve) => (closed ? resolve() : open!.on('close', () => resolve())));
  });
});

describe('readEventStream', () => {
  const streamOf = (...chunks: string[]): ReadableStream<Uint8Array> =>
    new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });

  test('§6 frames split across chunks and multi-byte characters are reassembled', async () => {
    const frame =
      'id: 1\nevent: session_update\ndata: {"id":1,"v":1,"type":"session_update","data":{"text":"héllo ✓"}}\n\n';
    const bytes = new TextEncoder().encode(frame);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
        controller.close();
      },
    });
    const events: DaemonEvent[] = [];
    for await (const event of readEventStream(body)) events.push(event);
    expect(events).toEqual([{ id: 1, v: 1, type: 'session_update', data: { text: 'héllo ✓' } }]);
  });

  test('§6 a stream without frame breaks is refused once it exceeds the buffer bound', async () => {
    const consume = async (): Promise<void> => {
      for await (const _ of readEventStream(streamOf('data: ', 'x'.repeat(100), 'y'.repeat(100)), 64));
    };
    await expect(consume()).rejects.toBeInstanceOf(DaemonProtocolError);
  });
});
