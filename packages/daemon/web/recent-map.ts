// A map that keeps its newest `capacity` entries: the oldest (by last use) leave first.

export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();

  /** At most `capacity` entries (a positive integer). */
  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`a RecentMap's capacity must be a positive integer, not ${capacity}`);
  }

  /** The value of `key`, now the most recently used; `undefined` when absent. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Keeps `value` under `key` (the oldest entry leaves when full) and returns it. */
  add(key: K, value: V): V {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
    return value;
  }

  /** How many entries it holds. */
  get size(): number {
    return this.entries.size;
  }
}
