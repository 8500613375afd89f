import { afterAll, beforeAll, expect, test } from 'vitest';
import { api, openEvents, textPrompt, type EventStream, type SseFrame } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Issue 26 item 7, its acceptance (docs/decisions/029): with one slot and no queue, turns whose
// model calls find the slot taken wait inside the runtime and get it in the order they arrived,
// the moment it frees — not after a Retry-After sleep, and not in whichever order timers fire.

/** How long the echo model takes for one call: the slot's hold time. */
const MODEL_CALL_MS = 1_000;

const terminal = (f: SseFrame): boolean => f.event === 'turn_complete' || f.event === 'turn_error';

let sluice: SluiceProcess;
beforeAll(async () => {
  const flags = {
    'model-max-concurrency': 1,
    'model-max-queued': 0,
    'echo-delay-ms': MODEL_CALL_MS,
    'drain-timeout-ms': 0,
  };
  sluice = await startSluice(Object.entries(flags).flatMap(([flag, value]) => [`--${flag}`, String(value)]));
});
afterAll(async () => {
  await sluice?.stop();
});

async function session(): Promise<{ sessionId: string; stream: EventStream }> {
  const res = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
  expect(res.status).toBe(200);
  return { sessionId: res.body.sessionId, stream: await openEvents(sluice.url, res.body.sessionId) };
}

interface TurnEnd {
  frame: SseFrame;
  at: number;
}

/** Sends a prompt; `ended` resolves, once its turn ends, with the terminal frame and when it came. */
async function prompt(
  { sessionId, stream }: { sessionId: string; stream: EventStream },
  text: string,
): Promise<{ ended: Promise<TurnEnd> }> {
  const res = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
  expect(res.status).toBe(202);
  const promptId = res.body.promptId as string;
  const ended = stream
    .waitFor((f) => terminal(f) && f.data.promptId === promptId, 30_000)
    .then((frame) => ({ frame, at: performance.now() }));
  return { ended };
}

const snapshot = async (): Promise<{ inflight: number }> =>
  (await api(sluice.url, 'GET', '/runtime/snapshot')).body;

test('issue 26 item 7: with one slot and no queue, prompts of 4 sessions sent 100 ms apart behind a running turn finish in the order sent, each one model call after the one before', async () => {
  const sessions = await Promise.all([session(), session(), session(), session(), session()]);
  const [busy, ...others] = sessions;
  // A first turn opens the journal, so that the turns measured pay no start-up cost.
  await (
    await prompt(busy, 'warm up')
  ).ended;
  const slow = await prompt(busy, 'the slow turn that holds the slot');
  await expect.poll(async () => (await snapshot()).inflight, { interval: 10, timeout: 5_000 }).toBe(1);
  const turns = [slow.ended];
  for (const [i, other] of others.entries()) {
    turns.push((await prompt(other, `prompt ${i + 1}`)).ended);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ends = await Promise.all(turns);
  for (const { frame } of ends) expect(frame.event).toBe('turn_complete');
  const gaps = ends.slice(1).map((end, i) => Math.round(end.at - ends[i]!.at));
  // In the order sent: every gap is positive; and within one model call (plus slack for this
  // loaded machine, well under the 1 s minimum Retry-After a sleeping retry would add).
  for (const gap of gaps) {
    expect(gap, `gaps ${gaps.join(', ')} ms`).toBeGreaterThan(0);
    expect(gap, `gaps ${gaps.join(', ')} ms`).toBeLessThan(MODEL_CALL_MS * 1.5);
  }
  for (const { stream } of sessions) stream.close();
});
