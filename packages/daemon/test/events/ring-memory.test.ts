import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { EventBus } from '../../src/events/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

/** Heap bytes in use after a full collection. */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const SESSIONS = 16;
const BODY_CHARS = 1_000_000;

describe('replay rings hold what they replay, once', () => {
  // qwen's command list carries every skill's text (~1.5 MB) and each session gets its own; a ring
  // that kept the event object beside its JSON text held that twice per session.
  test('a large event costs its ring about its JSON text, not also the object it was made from', () => {
    const buses: EventBus[] = [];
    const before = heapUsed();
    for (let i = 0; i < SESSIONS; i++) {
      const bus = new EventBus();
      // A fresh flat string per session, as JSON.parse of an agent's line makes it.
      const body = Buffer.alloc(BODY_CHARS, 97 + (i % 26)).toString('latin1');
      bus.publish({
        type: 'session_update',
        data: { update: { sessionUpdate: 'available_commands_update', body } },
      });
      buses.push(bus);
    }
    const held = heapUsed() - before;
    const text = SESSIONS * BODY_CHARS;
    expect(held).toBeGreaterThan(text * 0.9);
    expect(held).toBeLessThan(text * 1.4);
    const replayed = buses[3]!.subscribe({ lastEventId: 0 }).tryRead()!;
    expect((replayed.envelope.data as { update: { body: string } }).update.body).toBe('d'.repeat(BODY_CHARS));
  });
});
