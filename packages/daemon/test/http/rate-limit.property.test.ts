import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonTap } from '../../src/observe/index.js';
import { api } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 28 item 7: requests sent at once over real sockets, in any mix of tiers and order, are
// counted exactly: in each window each tier lets exactly min(limit, sent) through and refuses
// the rest with 429 rate_limit_exceeded — never one more, never one less.

const LIMITS = { prompt: 2, mutation: 3, read: 5 };
const WINDOW_MS = 60_000;
const clock = { now: Date.UTC(2026, 0, 1) };

let sluice: InProcessDaemon;
let sessionId: string;
beforeAll(async () => {
  sluice = await startInProcess(
    { maxPendingPromptsPerSession: 1_000 },
    { tap: new DaemonTap() },
    { now: () => clock.now, rateLimit: { limits: LIMITS, windowMs: WINDOW_MS } },
  );
  sessionId = (await api(sluice.url, 'POST', '/session', { body: {} })).body.sessionId as string;
});
afterAll(() => sluice.stop());

type Tier = keyof typeof LIMITS;

/** One request of `tier` that succeeds when not limited: a prompt, a cancel, a read. */
function send(tier: Tier): Promise<{ status: number; code?: string }> {
  const request =
    tier === 'prompt'
      ? api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
          body: { prompt: [{ type: 'text', text: 'p' }] },
        })
      : tier === 'mutation'
        ? api(sluice.url, 'POST', `/session/${sessionId}/cancel`)
        : api(sluice.url, 'GET', '/capabilities');
  return request.then((res) => ({ status: res.status, code: res.body?.code }));
}

test('concurrent requests of mixed tiers: exactly min(limit, sent) of each tier pass per window', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom<Tier>('prompt', 'mutation', 'read'), { minLength: 1, maxLength: 16 }),
      async (tiers) => {
        clock.now += WINDOW_MS; // a new window for every tier
        const answers = await Promise.all(tiers.map(send));
        for (const tier of ['prompt', 'mutation', 'read'] as const) {
          const mine = answers.filter((_answer, i) => tiers[i] === tier);
          const passed = mine.filter((answer) => answer.status !== 429);
          expect(passed.length).toBe(Math.min(LIMITS[tier], mine.length));
          expect(passed.every((answer) => answer.status < 300)).toBe(true);
          expect(mine.filter((answer) => answer.code === 'rate_limit_exceeded').length).toBe(
            mine.length - passed.length,
          );
        }
      },
    ),
    { numRuns: 25 },
  );
});
