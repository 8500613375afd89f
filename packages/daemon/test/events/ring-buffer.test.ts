import fc from 'fast-check';
import { expect, test } from 'vitest';
import { RingBuffer } from '../../src/events/ring-buffer.js';

test('the ring buffer behaves like a bounded FIFO that drops its oldest value when full', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 8 }),
      fc.array(fc.oneof(fc.constant('dequeue' as const), fc.constant('clear' as const), fc.nat(1000)), {
        maxLength: 80,
      }),
      (capacity, ops) => {
        const ring = new RingBuffer<number>(capacity);
        const model: number[] = [];
        for (const op of ops) {
          if (op === 'dequeue') expect(ring.dequeue()).toBe(model.splice(0, 1)[0]);
          else if (op === 'clear') {
            ring.clear();
            model.length = 0;
          } else {
            const evicted = model.length === capacity ? model.splice(0, 1)[0] : undefined;
            model.push(op);
            expect(ring.push(op)).toBe(evicted);
          }
          expect(ring.length).toBe(model.length);
          expect(Array.from({ length: model.length + 1 }, (_, i) => ring.at(i))).toEqual([
            ...model,
            undefined,
          ]);
        }
      },
    ),
  );
});

test('a ring buffer capacity that is not a positive integer is rejected with the value in the message', () => {
  for (const capacity of [0, -1, 1.5, Number.NaN, Infinity])
    expect(() => new RingBuffer(capacity)).toThrow(
      `capacity must be a positive integer, got ${String(capacity)}`,
    );
});
