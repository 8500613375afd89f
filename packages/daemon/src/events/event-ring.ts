import type { EventFrame } from './frames.js';
import { RingBuffer } from './ring-buffer.js';

/**
 * The replay window of one session: the newest `capacity` event frames, whose ids are
 * consecutive. Appending evicts the oldest frame in O(1).
 */
export class EventRing {
  private readonly frames: RingBuffer<EventFrame>;
  private newestId = 0;

  constructor(readonly capacity: number) {
    this.frames = new RingBuffer(capacity);
  }

  /** Frames retained now (≤ `capacity`). */
  get length(): number {
    return this.frames.length;
  }

  /** Id of the newest frame ever appended; 0 before the first. */
  get lastId(): number {
    return this.newestId;
  }

  /** Id of the oldest retained frame, or `undefined` while empty. */
  get earliestId(): number | undefined {
    return this.frames.length === 0 ? undefined : this.newestId - this.frames.length + 1;
  }

  /** Appends the frame with id `lastId + 1`. */
  append(frame: EventFrame): void {
    if (frame.id !== this.newestId + 1)
      throw new RangeError(
        `event ids must be consecutive: expected ${this.newestId + 1}, got ${String(frame.id)}`,
      );
    this.frames.push(frame);
    this.newestId = frame.id;
  }

  /** Appends the retained frames with `id > afterId` to `into`, oldest first, and returns it. */
  framesAfter(afterId: number, into: EventFrame[] = []): EventFrame[] {
    const earliest = this.earliestId;
    if (earliest === undefined) return into;
    for (let index = Math.max(0, afterId + 1 - earliest); index < this.frames.length; index++)
      into.push(this.frames.at(index) as EventFrame);
    return into;
  }
}
