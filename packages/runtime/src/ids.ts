import { randomBytes } from 'node:crypto';

/**
 * Makes UUIDv7 call ids (RFC 9562): a millisecond timestamp, then a 12-bit counter within the
 * millisecond (method 1), then 62 random bits fixed per generator. Ids are unique and sorted
 * by creation, which keeps journal indexes append-only, and cost one string concatenation.
 */
export class CallIdGenerator {
  private lastMs = -1;
  private counter = 0;
  private prefix = '';
  /** `-` and the random tail, joined once. */
  private readonly tail: string;
  /** The counter's digits and the tail, joined on first use: each id is then one concatenation. */
  private readonly suffixes: Array<string | undefined> = new Array<string | undefined>(0x1000).fill(
    undefined,
  );

  constructor() {
    const random = randomBytes(8);
    random[0] = ((random[0] ?? 0) & 0x3f) | 0x80; // variant 10
    this.tail = '-' + random.toString('hex', 0, 2) + '-' + random.toString('hex', 2, 8);
  }

  /**
   * The next id, stamped with `epochMs`, milliseconds since 1970 (default: now). A time before
   * 1970 or not a number (a broken injected clock) is stamped as 0, so ids stay well-formed,
   * unique and ordered.
   */
  next(epochMs: number = Date.now()): string {
    const floored = Math.floor(epochMs);
    let now = floored >= 0 ? floored : 0;
    if (now <= this.lastMs) {
      now = this.lastMs;
      if (++this.counter > 0xfff) {
        now = this.lastMs + 1; // counter exhausted: borrow the next millisecond
        this.counter = 0;
      }
    } else this.counter = 0;
    if (now !== this.lastMs) {
      this.lastMs = now;
      this.prefix = timestampPrefix(now);
    }
    const counter = this.counter;
    return this.prefix + (this.suffixes[counter] ??= HEX3[counter] + this.tail);
  }
}

const HEX3: string[] = Array.from({ length: 0x1000 }, (_, i) => i.toString(16).padStart(3, '0'));

const TWO_24 = 0x100_0000;

/**
 * The id's first 48 bits (milliseconds, RFC 9562 `unix_ts_ms`) and its version digit, as
 * `xxxxxxxx-xxxx-7`. Table lookups instead of `toString(16)`, which costs as much as the rest
 * of an id: at a realistic rate every call starts a new millisecond.
 */
export function timestampPrefix(epochMs: number): string {
  const high = Math.floor(epochMs / TWO_24) % TWO_24; // 48 bits: the field wraps in the year 10889
  const low = epochMs % TWO_24;
  const hex = HEX3[high >> 12]! + HEX3[high & 0xfff]! + HEX3[low >> 12]! + HEX3[low & 0xfff]!;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`;
}
