import fc from 'fast-check';
import { expect, test } from 'vitest';
import { LinkedQueue } from '../src/scheduler/linked-queue.js';

test('the wait queue keeps FIFO order under random enqueue, dequeue and removal from the middle', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.constant('enq'), fc.constant('deq'), fc.nat(50))), (ops) => {
      const queue = new LinkedQueue<number>();
      const model: number[] = [];
      const nodes = new Map<number, ReturnType<typeof queue.enqueue>>();
      let next = 0;
      for (const op of ops) {
        if (op === 'enq') {
          nodes.set(next, queue.enqueue(next));
          model.push(next++);
        } else if (op === 'deq') {
          const expected = model.length ? model.splice(0, 1)[0] : undefined;
          expect(queue.dequeue()).toBe(expected);
        } else {
          const node = nodes.get(op);
          const index = model.indexOf(op);
          expect(node ? queue.remove(node) : false).toBe(index >= 0);
          if (index >= 0) model.splice(index, 1);
        }
        expect(queue.size).toBe(model.length);
        expect([...queue]).toEqual(model);
        expect(queue.peek()).toBe(model[0]);
      }
    }),
  );
});

test('removing a node twice is a no-op', () => {
  const queue = new LinkedQueue<string>();
  const node = queue.enqueue('a');
  queue.enqueue('b');
  expect(queue.remove(node)).toBe(true);
  expect(queue.remove(node)).toBe(false);
  expect([...queue]).toEqual(['b']);
});

test('an object that is its own node joins and leaves the queue like a node the queue made', () => {
  const queue = new LinkedQueue<string>();
  const own = {
    get value() {
      return 'own';
    },
    prev: undefined,
    next: undefined,
    linked: false,
  };
  queue.enqueue('a');
  queue.link(own);
  queue.enqueue('b');
  expect([...queue]).toEqual(['a', 'own', 'b']);
  expect(() => queue.link(own)).toThrow(/in a queue already/);
  expect(queue.remove(own)).toBe(true);
  expect(own.linked).toBe(false);
  expect([...queue]).toEqual(['a', 'b']);
  queue.link(own);
  expect(queue.dequeue()).toBe('a');
  expect(queue.dequeue()).toBe('b');
  expect(queue.dequeue()).toBe('own');
  expect(queue.size).toBe(0);
});
