/** One kind of refusal the dashboard lists: which layer refused, why, whom, and how often. */
export interface RefusalEntry {
  /** `prompt`: the sessions layer refused a prompt; `model`: the runtime refused a model call. */
  layer: 'prompt' | 'model';
  code: string;
  /** The refused prompt's session, when the refusal names one. */
  sessionId?: string;
  /** The latest error's message: limits and ids, never prompt text (admission errors quote none). */
  message: string;
  /** Wall-clock ms of the first and the latest refusal of this kind. */
  firstAt: number;
  lastAt: number;
  /** Refusals of this kind since it entered the list. */
  count: number;
}

const MAX_MESSAGE_CHARS = 200;

/**
 * The kinds of refusal seen last (one entry per layer, code and session), the most recent first,
 * at most `capacity` of them. Under overload a session refuses at the rate prompts arrive: a
 * repeat of the latest kind only bumps its count (no allocation, no message read); another
 * known kind moves to the front; a new kind pushes the least recent out. All O(1).
 */
export class RecentRefusals {
  /** Entries by kind, least recent first (a Map keeps insertion order). */
  private readonly entries = new Map<string, RefusalEntry>();
  private last: RefusalEntry | undefined;

  constructor(
    readonly capacity: number,
    private readonly wallNow: () => number = Date.now,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity must be a positive integer, got ${String(capacity)}`);
  }

  /** Records a refusal; `message` is read only when the kind is not the latest one. */
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
    const key = `${layer}\u0000${code}\u0000${sessionId ?? ''}`;
    const text = message();
    const bounded = text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
    let entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      entry.count++;
      entry.lastAt = now;
      entry.message = bounded;
    } else {
      entry = { layer, code, message: bounded, firstAt: now, lastAt: now, count: 1 };
      if (sessionId !== undefined) entry.sessionId = sessionId;
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, entry);
    this.last = entry;
  }

  /** Copies of the entries, the most recent first. */
  list(): RefusalEntry[] {
    return [...this.entries.values()].reverse().map((entry) => ({ ...entry }));
  }
}
