/** One refusal the dashboard lists: which layer refused, why, and how often in a row. */
export interface RefusalEntry {
  /** `prompt`: the sessions layer refused a prompt; `model`: the runtime refused a model call. */
  layer: 'prompt' | 'model';
  code: string;
  /** The refused prompt's session, when the refusal names one. */
  sessionId?: string;
  /** The error's message: limits and ids, never prompt text (admission errors quote none). */
  message: string;
  /** Wall-clock ms of the first and the latest refusal of this run. */
  firstAt: number;
  lastAt: number;
  /** Refusals in this run: the same refusal repeated without another in between. */
  count: number;
}

const MAX_MESSAGE_CHARS = 200;

/**
 * The last refusals, newest first, in a fixed-size ring (O(1) per refusal). A refusal that
 * repeats the previous one (same layer, code and session) counts in its entry instead of
 * pushing the others out: under overload one session refuses at the rate prompts arrive.
 */
export class RecentRefusals {
  private readonly ring: Array<RefusalEntry | undefined>;
  private next = 0;
  private last: RefusalEntry | undefined;

  constructor(
    readonly capacity: number,
    private readonly wallNow: () => number = Date.now,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity must be a positive integer, got ${String(capacity)}`);
    this.ring = new Array<RefusalEntry | undefined>(capacity).fill(undefined);
  }

  /** Records a refusal; `message` is read only when it starts a new entry. */
  add(
    layer: RefusalEntry['layer'],
    code: string,
    sessionId: string | undefined,
    message: () => string,
  ): void {
    const now = this.wallNow();
    const last = this.last;
    if (last !== undefined && last.code === code && last.sessionId === sessionId && last.layer === layer) {
      last.count++;
      last.lastAt = now;
      return;
    }
    const text = message();
    const entry: RefusalEntry = {
      layer,
      code,
      message: text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text,
      firstAt: now,
      lastAt: now,
      count: 1,
    };
    if (sessionId !== undefined) entry.sessionId = sessionId;
    this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
    this.last = entry;
  }

  /** Copies of the entries, newest first. */
  list(): RefusalEntry[] {
    const result: RefusalEntry[] = [];
    for (let step = 1; step <= this.capacity; step++) {
      const entry = this.ring[(this.next - step + this.capacity) % this.capacity];
      if (entry === undefined) break;
      result.push({ ...entry });
    }
    return result;
  }
}
