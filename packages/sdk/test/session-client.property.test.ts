import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DaemonClient,
  DaemonPendingPromptLimitError,
  DaemonSessionClient,
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
  type ScriptServer,
} from './helpers/script-server.js';

// SPEC BP-11/BP-14 under concurrency on DaemonSessionClient's subscription path: random
// interleavings of prompt() calls while one long-lived events() stream is connected. A turn's
// terminal event reaches the client either before its 202 (the race the reference client
// loses) or at a random moment after it; other prompts get a blocking 200, a 503, a dropped
// connection, or hang until their caller aborts. Every turn that ends must settle its own
// prompt() from the long-lived stream, and the shared counter must stay exact.

const OUTCOMES = [
  'ok200',
  'completeBefore202',
  'completeAfter202',
  'errorBefore202',
  'errorAfter202',
  'full503',
  'netFail',
  'hang',
] as const;
type Outcome = (typeof OUTCOMES)[number];
interface Op {
  outcome: Outcome;
  /** Turns of the event loop before this call starts (interleaving). */
  delay: number;
  /** Turns between the 202 and the terminal event of an `…After202` outcome. */
  lag: number;
}

const SENTINEL = 'sentinel';
let server: ScriptServer;
let run = 0;
/** Per session: the long-lived stream, its next event id, the terminal events the client saw. */
interface Live {
  stream: ServerResponse;
  nextId: number;
  delivered: Set<string>;
}
const live = new Map<string, Live>();
const heldPosts: ServerResponse[] = [];
let promptCount = 0;

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

function terminal(session: Live, sessionId: string, promptId: string, error: boolean): void {
  const id = session.nextId++;
  if (error)
    sendEvent(session.stream, 'turn_error', { sessionId, promptId, message: 'failed' }, id, promptId);
  else
    sendEvent(session.stream, 'turn_complete', { sessionId, promptId, stopReason: 'end_turn' }, id, promptId);
}

beforeAll(async () => {
  server = await startScriptServer((request, res) => {
    const sessionId = request.url.split('/')[2] ?? '';
    if (request.method === 'GET' && request.url.includes('/events')) {
      openSse(res, 'e');
      live.set(sessionId, { stream: res, nextId: 1, delivered: new Set() });
      return;
    }
    if (request.method === 'POST' && request.url.endsWith('/prompt')) {
      // the prompt text is `outcome:lag`
      const [outcome, lag] = promptTextOf(request).split(':') as [Outcome | typeof SENTINEL, string?];
      const session = live.get(sessionId)!;
      const promptId = `p${++promptCount}`;
      const accept = (): void =>
        json(res, 202, { promptId, lastEventId: session.nextId - 1, eventEpoch: 'e' });
      switch (outcome) {
        case SENTINEL:
          return void heldPosts.push(res);
        case 'ok200':
          return json(res, 200, { stopReason: 'end_turn' });
        case 'full503':
          return json(
            res,
            503,
            { error: 'full', code: 'prompt_queue_full', sessionId, limit: 9, pendingCount: 9 },
            { 'Retry-After': '5' },
          );
        case 'netFail':
          return void res.socket?.destroy();
        case 'hang':
          return accept();
        case 'completeBefore202':
        case 'errorBefore202':
          // the turn ends, and the client has read its end, before the 202 is written
          terminal(session, sessionId, promptId, outcome === 'errorBefore202');
          return void until(() => session.delivered.has(promptId)).then(accept);
        case 'completeAfter202':
        case 'errorAfter202': {
          accept();
          return void turns(Number(lag)).then(() =>
            terminal(session, sessionId, promptId, outcome === 'errorAfter202'),
          );
        }
      }
    }
    if (request.method === 'DELETE') return json(res, 200, { removed: true });
    json(res, 404, { error: 'unscripted' });
  });
});

afterAll(async () => {
  for (const session of live.values()) session.stream.destroy();
  await server.close();
});

const opArb: fc.Arbitrary<Op> = fc.record({
  outcome: fc.constantFrom(...OUTCOMES),
  delay: fc.nat({ max: 4 }),
  lag: fc.nat({ max: 8 }),
});

test('BP-11/BP-14 on the subscription path the counter stays exact and every turn that ends settles its own prompt, its end arriving before or after the 202', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.array(opArb, { minLength: 1, maxLength: 12 }),
      async (limit, ops) => {
        const sessionId = `s${run++}`;
        // Connection failures are one of the drawn outcomes: each must surface, not be retried.
        const client = new DaemonClient({ baseUrl: server.url, reconnect: false, promptRetries: 0 });
        const sc = new DaemonSessionClient({
          client,
          session: { sessionId, workspaceCwd: '/w', attached: false },
          lastEventId: 0,
          maxPendingPromptsPerSession: limit,
        });
        const count = (): number => sc.pendingPromptCount;
        const observe = (): void => {
          expect(count()).toBeGreaterThanOrEqual(0);
          expect(count()).toBeLessThanOrEqual(limit);
        };
        const stop = new AbortController();
        let accepted = false;
        const listening = (async () => {
          for await (const event of sc.events({
            signal: stop.signal,
            onSseStreamAccepted: () => (accepted = true),
          })) {
            const promptId = (event.data as { promptId?: string } | null)?.promptId;
            if (promptId !== undefined) live.get(sessionId)!.delivered.add(promptId);
          }
        })();
        await until(() => accepted);
        const streamsBefore = server.requests.filter((r) => r.method === 'GET').length;

        // the sentinel holds one slot throughout: a stray extra release would show below
        const heldBefore = heldPosts.length;
        const sentinel = sc.prompt(text(SENTINEL)).catch((e: unknown) => e);
        await until(() => heldPosts.length > heldBefore);
        expect(count()).toBe(1);

        const hangs: AbortController[] = [];
        /** Calls that end by themselves (all but the admitted hanging ones), and the hanging ones. */
        const ending: Array<Promise<void>> = [];
        const hanging: Array<Promise<void>> = [];
        for (const op of ops) {
          await turns(op.delay);
          observe();
          const controller = new AbortController();
          const before = count();
          const call = sc.prompt(text(`${op.outcome}:${op.lag}`), controller.signal);
          const reserved = count() === before + 1;
          if (reserved && op.outcome === 'hang') hangs.push(controller);
          if (!reserved) expect(before).toBe(limit);
          observe();
          (reserved && op.outcome === 'hang' ? hanging : ending).push(
            call.then(
              (result) => {
                observe();
                expect(reserved).toBe(true);
                expect(['ok200', 'completeBefore202', 'completeAfter202']).toContain(op.outcome);
                expect(result.stopReason).toBe('end_turn');
              },
              (error: unknown) => {
                observe();
                if (!reserved) {
                  expect(error).toBeInstanceOf(DaemonPendingPromptLimitError);
                  return expect(error).toMatchObject({ local: true, limit, pendingCount: limit });
                }
                if (op.outcome === 'errorBefore202' || op.outcome === 'errorAfter202')
                  return expect(isDaemonTurnError(error)).toBe(true);
                if (op.outcome === 'full503') return expect(error).toMatchObject({ local: false, limit: 9 });
                if (op.outcome === 'netFail') return expect(error).toBeInstanceOf(TypeError);
                // only a hanging turn may end by abort; a lost terminal event would end here too
                expect(op.outcome).toBe('hang');
                expect(error).toMatchObject({ name: 'AbortError' });
              },
            ),
          );
        }
        // every turn that ends settles by itself (a lost terminal event would hang here); then
        // the hanging ones are abandoned
        await Promise.all(ending);
        expect(count()).toBe(1 + hangs.length);
        for (const controller of hangs) controller.abort();
        await Promise.all(hanging);
        expect(count()).toBe(1);
        // the long-lived stream settled everything: no temporary stream was opened
        expect(server.requests.filter((r) => r.method === 'GET').length).toBe(streamsBefore);
        for (const res of heldPosts) res.destroy();
        heldPosts.length = 0;
        await sentinel;
        expect(count()).toBe(0);
        stop.abort();
        await listening;
      },
    ),
    { numRuns: 40 },
  );
});
