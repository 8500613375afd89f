import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonClient, DaemonPendingPromptLimitError } from '../src/index.js';
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

// SPEC BP-11/BP-12 under concurrency: random interleavings of prompt() calls whose daemon
// answers 200, 202 + turn_complete / turn_error, 503, drops the connection (of the POST or of
// the event stream), ends the stream early, or holds the turn until the caller aborts.

const OUTCOMES = [
  'ok200',
  'ok202',
  'error202',
  'full503',
  'netFail',
  'streamDrop',
  'streamNetFail',
  'hang',
] as const;
type Outcome = (typeof OUTCOMES)[number];
interface Op {
  outcome: Outcome;
  /** Turns of the event loop before this call starts (interleaving). */
  delay: number;
  /** Abort this call after that many turns; `undefined` = never (a `hang` is aborted at the end). */
  abortAfter: number | undefined;
  preAborted: boolean;
}

const SENTINEL = 'sentinel';
let server: ScriptServer;
let nextEventId = 1;
const plans = new Map<number, { outcome: Outcome; promptId: string }>();
const openStreams = new Set<ServerResponse>();
const heldPosts: ServerResponse[] = [];

beforeAll(async () => {
  server = await startScriptServer((request, res) => {
    const sessionId = request.url.split('/')[2] ?? '';
    if (request.method === 'POST' && request.url.endsWith('/prompt')) {
      const outcome = promptTextOf(request);
      if (outcome === SENTINEL) return void heldPosts.push(res);
      if (outcome === 'ok200') return json(res, 200, { stopReason: 'end_turn' });
      if (outcome === 'full503')
        return json(
          res,
          503,
          { error: 'full', code: 'prompt_queue_full', sessionId, limit: 3, pendingCount: 3 },
          { 'Retry-After': '5' },
        );
      if (outcome === 'netFail') return void res.socket?.destroy();
      const cursor = nextEventId;
      nextEventId += 10;
      const promptId = `p${cursor}`;
      plans.set(cursor, { outcome: outcome as Outcome, promptId });
      return json(res, 202, { promptId, lastEventId: cursor, eventEpoch: 'e' });
    }
    if (request.method === 'GET' && request.url.includes('/events')) {
      const cursor = Number(request.headers['last-event-id']);
      const plan = plans.get(cursor);
      openSse(res, 'e');
      if (plan === undefined) return void res.end();
      const { outcome, promptId } = plan;
      if (outcome === 'ok202')
        sendEvent(
          res,
          'turn_complete',
          { sessionId, promptId, stopReason: 'end_turn' },
          cursor + 1,
          promptId,
        );
      else if (outcome === 'error202')
        sendEvent(res, 'turn_error', { sessionId, promptId, message: 'failed' }, cursor + 1, promptId);
      else if (outcome === 'streamDrop') return void res.end();
      else if (outcome === 'streamNetFail') return void res.socket?.destroy();
      openStreams.add(res);
      res.on('close', () => openStreams.delete(res));
      return;
    }
    if (request.method === 'DELETE') return json(res, 200, { removed: true });
    json(res, 404, { error: 'unscripted' });
  });
});

afterAll(() => server.close());

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

const opArb: fc.Arbitrary<Op> = fc.record({
  outcome: fc.constantFrom(...OUTCOMES),
  delay: fc.nat({ max: 4 }),
  abortAfter: fc.option(fc.nat({ max: 12 }), { nil: undefined }),
  preAborted: fc.constantFrom(false, false, false, false, true),
});

test('BP-11/BP-12 the local counter never exceeds the limit, never goes negative, and each slot is released once', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.array(opArb, { minLength: 1, maxLength: 12 }),
      async (limit, ops) => {
        const sessionId = `s${run++}`;
        // Connection failures are one of the drawn outcomes: each must surface, not be retried.
        const client = new DaemonClient({
          baseUrl: server.url,
          maxPendingPromptsPerSession: limit,
          reconnect: false,
          promptRetries: 0,
        });
        const count = (): number => client.pendingPromptCount(sessionId);
        const observe = (): void => {
          expect(count()).toBeGreaterThanOrEqual(0);
          expect(count()).toBeLessThanOrEqual(limit);
        };
        // The sentinel holds one slot for the whole run: a stray extra release by any other
        // call would show as a count below 1 once everything else has settled.
        const heldBefore = heldPosts.length;
        const sentinel = client.prompt(sessionId, text(SENTINEL)).catch((e: unknown) => e);
        await until(() => heldPosts.length > heldBefore);
        expect(count()).toBe(1);

        const controllers: AbortController[] = [];
        const settled: Array<Promise<void>> = [];
        for (const op of ops) {
          await turns(op.delay);
          observe();
          const controller = new AbortController();
          controllers.push(controller);
          if (op.preAborted) controller.abort();
          const before = count();
          const call = client.prompt(sessionId, text(op.outcome), controller.signal);
          const reserved = count() === before + 1;
          if (!reserved && !op.preAborted) expect(before).toBe(limit);
          observe();
          settled.push(
            call.then(
              () => observe(),
              (error: unknown) => {
                observe();
                if (!reserved && !op.preAborted) {
                  expect(error).toBeInstanceOf(DaemonPendingPromptLimitError);
                  expect(error).toMatchObject({ local: true, limit, pendingCount: limit });
                }
              },
            ),
          );
          if (op.abortAfter !== undefined) void turns(op.abortAfter).then(() => controller.abort());
        }
        // hanging turns end only by abort: abort everything still open, then let all settle
        await turns(16);
        for (const controller of controllers) controller.abort();
        await Promise.all(settled);
        expect(count()).toBe(1);
        for (const res of heldPosts) res.destroy();
        heldPosts.length = 0;
        await sentinel;
        expect(count()).toBe(0);
      },
    ),
    { numRuns: 40 },
  );
  for (const res of openStreams) res.destroy();
});
