import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test, vi } from 'vitest';
import { EventBus, type EventFrame } from '../../src/events/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

/** Bytes in use after a full collection: the heap, and buffers outside it. */
function inUse(): number {
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

const SESSIONS = 16;
const BODY_CHARS = 1_000_000;
const WORDS = [
  'review',
  'the',
  'diff',
  'for',
  'correctness',
  'security',
  'and',
  'style;',
  'then',
  'post',
  '`a`',
  'comment.\\n',
];

/** A fresh flat string of prose-like text per session, as JSON.parse of an agent's line makes it. */
function skillText(seed: number): string {
  let text = '';
  let x = seed + 1;
  while (text.length < BODY_CHARS) {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    text += `${WORDS[x % WORDS.length]} `;
  }
  return Buffer.from(text.slice(0, BODY_CHARS), 'latin1').toString('latin1');
}

function publishLargeUpdates(): { buses: EventBus[]; frames: EventFrame[] } {
  const buses: EventBus[] = [];
  const frames: EventFrame[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const bus = new EventBus();
    bus.publish({
      type: 'session_update',
      data: { update: { sessionUpdate: 'available_commands_update', body: skillText(i) } },
    });
    buses.push(bus);
    frames.push(bus.subscribe({ lastEventId: 0 }).tryRead()!);
  }
  return { buses, frames };
}

describe('replay rings hold what they replay, once and packed', () => {
  // qwen's command list carries every skill's text (~1.5 MB) and each session gets its own; a ring
  // that kept the event object beside its JSON text held that twice per session.
  test('a packed frame replays exactly the text it was made with', async () => {
    const { frames } = publishLargeUpdates();
    const texts = frames.map((frame) => frame.json);
    await Promise.all(frames.map((frame) => frame.pack()));
    expect(frames.map((frame) => frame.json)).toEqual(texts);
    expect((frames[3]!.envelope.data as { update: { body: string } }).update.body).toBe(skillText(3));
  });

  test('16 sessions of 1 MB updates cost their rings under half of the text, once packed', async () => {
    const before = inUse();
    const { buses, frames } = publishLargeUpdates();
    frames.length = 0;
    // The rings pack on the thread pool; nothing here asks them to.
    await vi.waitFor(() => expect(inUse() - before).toBeLessThan(SESSIONS * BODY_CHARS * 0.5), {
      timeout: 10_000,
      interval: 100,
    });
    expect(buses).toHaveLength(SESSIONS);
  });
});
