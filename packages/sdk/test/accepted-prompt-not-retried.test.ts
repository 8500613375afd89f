import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonClient, withRetry } from '../src/index.js';
import { startInProcess, type InProcessDaemon } from '../../daemon/test/helpers/in-process-daemon.js';
import { text } from './helpers/script-server.js';

// A prompt the daemon accepted (202) must never come back as a *retryable* error: withRetry
// (and any caller following `error.retryable`) would post it a second time and the agent would
// run the same prompt twice. Here the daemon admits the prompt, but the event stream the SDK
// opens to wait for the turn is refused with 429 subscriber_limit_exceeded (64 subscribers).

let daemon: InProcessDaemon;
const streams: AbortController[] = [];

beforeAll(async () => {
  daemon = await startInProcess({ echoDelayMs: 60_000 });
});
afterAll(async () => {
  for (const s of streams) s.abort();
  await daemon?.stop();
});

test('withRetry(() => client.prompt()) never sends an accepted prompt twice', async () => {
  const client = new DaemonClient({ baseUrl: daemon.url, reconnect: false });
  const { sessionId } = await client.createOrAttachSession({ sessionScope: 'thread' });
  // fill the session's subscriber slots (DEFAULT_MAX_SUBSCRIBERS = 64)
  for (;;) {
    const controller = new AbortController();
    const res = await fetch(`${daemon.url}/session/${sessionId}/events`, {
      headers: { Accept: 'text/event-stream' },
      signal: controller.signal,
    });
    if (res.status === 429) {
      await res.body?.cancel();
      break;
    }
    streams.push(controller);
  }
  let posts = 0;
  const error = await withRetry(
    () => {
      posts++;
      return client.prompt(sessionId, text('run me once'));
    },
    { retries: 1, random: () => 0 },
  ).catch((e: unknown) => e);
  const { pendingPrompts } = await client.pendingPrompts(sessionId);
  expect(pendingPrompts.map((p) => p.text)).toEqual(['run me once']);
  expect(posts).toBe(1);
  expect(error).toBeInstanceOf(Error);
  expect((error as { retryable?: unknown }).retryable).not.toBe(true);
});
