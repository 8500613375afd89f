import { positiveInteger } from '../validate.js';

/**
 * A fixed-capacity FIFO on a circular array: O(1) push, dequeue and indexed access, no
 * `Array#shift`. When full, `push` overwrites the oldest value and returns it. The backing
 * array grows with use up to `capacity`, so a large, mostly empty buffer costs little.
 */
export class RingBuffer<T> {
  private readonly slots: (T | undefined)[] = [];
  private head = 0;
  private count = 0;

  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = positiveInteger('capacity', capacity);
  }

  get length(): number {
    return this.count;
  }

  /** Appends `value`; when the buffer is full the oldest value is dropped and returned. */
  push(value: T): T | undefined {
    if (this.count < this.capacity) {
      this.slots[(this.head + this.count) % this.capacity] = value;
      this.count++;
      return undefined;
    }
    const evicted = this.slots[this.head];
    this.slots[this.head] = value;
    this.head = (this.head + 1) % this.capacity;
    return evicted;
  }

  /** Removes and returns the oldest value, or `undefined` when empty. */
  dequeue(): T | undefined {
    if (this.count === 0) return undefined;
    const value = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    return value;
  }

  /** The value `index` places after the oldest (0 = oldest), or `undefined` out of range. */
  at(index: number): T | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) return undefined;
    return this.slots[(this.head + index) % this.capacity];
  }

  /** Drops every value (and the references to them). */
  clear(): void {
    this.slots.length = 0;
    this.head = 0;
    this.count = 0;
  }
}
