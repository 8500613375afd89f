import type { EventMemory } from './event-memory.js';
import type { EventFrame } from './frames.js';
import { RingBuffer } from './ring-buffer.js';

/**
 * What a frame costs the ring: its serialized form at two bytes a character (V8 stores a string
 * with any character beyond Latin-1 as UTF-16), so the count never falls below what is held.
 */
export function frameBytes(frame: EventFrame): number {
  return 2 * frame.chars;
}

/**
 * The replay window of one session: the newest event frames, whose ids are consecutive, at
 * most `capacity` of them and at most `maxBytes` (see {@link frameBytes}); a shared
 * {@link EventMemory} may take its oldest frames too. Appending evicts the oldest in O(1).
 */
export class EventRing {
  private readonly frames: RingBuffer<EventFrame>;
  private newestId = 0;
  private held = 0;

  constructor(
    readonly capacity: number,
    readonly maxBytes: number = Infinity,
    private readonly memory?: EventMemory,
  ) {
    this.frames = new RingBuffer(capacity);
    memory?.register(this);
  }

  /** Bytes held by the retained frames. */
  get bytes(): number {
    return this.held;
  }

  /** Frames retained now (≤ `capacity`). */
  get length(): number {
    return this.frames.length;
  }

  /** Id of the newest frame ever appended; 0 before the first. */
  get lastId(): number {
    return this.newestId;
  }

  /**
   * Id of the oldest retained frame; `undefined` before the first. Once every frame was evicted
   * by bytes it is `lastId + 1`: nothing is left to replay.
   */
  get earliestId(): number | undefined {
    if (this.newestId === 0) return undefined;
    return this.newestId - this.frames.length + 1;
  }

  /** Appends the frame with id `lastId + 1`. */
  append(frame: EventFrame): void {
    if (frame.id !== this.newestId + 1)
      throw new RangeError(
        `event ids must be consecutive: expected ${this.newestId + 1}, got ${String(frame.id)}`,
      );
    const evicted = this.frames.push(frame);
    void frame.pack();
    this.newestId = frame.id;
    const size = frameBytes(frame);
    let delta = size - (evicted === undefined ? 0 : frameBytes(evicted));
    this.held += delta;
    while (this.held > this.maxBytes && this.frames.length > 0) {
      const dropped = this.evictLocal();
      delta -= dropped;
    }
    this.memory?.change(delta);
  }

  /** Drops the oldest frame (for the shared budget); returns its size, 0 when empty. */
  evictOldest(): number {
    return this.evictLocal();
  }

  /** Drops every frame and leaves the shared budget; the ring is not used again. */
  release(): void {
    this.memory?.unregister(this);
    this.frames.clear();
    this.held = 0;
  }

  private evictLocal(): number {
    const dropped = this.frames.dequeue();
    if (dropped === undefined) return 0;
    const size = frameBytes(dropped);
    this.held -= size;
    return size;
  }

  /** Appends the retained frames with `id > afterId` to `into`, oldest first, and returns it. */
  framesAfter(afterId: number, into: EventFrame[] = []): EventFrame[] {
    const earliest = this.earliestId;
    if (earliest === undefined || this.frames.length === 0) return into;
    for (let index = Math.max(0, afterId + 1 - earliest); index < this.frames.length; index++)
      into.push(this.frames.at(index) as EventFrame);
    return into;
  }
}
