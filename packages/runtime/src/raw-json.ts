/**
 * A JSON value carried as the UTF-8 bytes of its text, exactly as a client sent them.
 *
 * Why: an agent sends the same large members with every model call (qwen-code: 45 KiB of tool
 * schemas). Read into objects, they cost a walk and an encoding for the journal, another for the
 * upstream, and garbage the size of the schemas that lives as long as the call. Kept as bytes,
 * the journal and an OpenAI-compatible upstream get them by one copy (`jsonBytes`), the
 * request-size cap counts their length (SCH-17), and only a reader that needs the value — a
 * provider of another family, `JSON.stringify` — parses them, once (docs/decisions/042).
 */
export class RawJson {
  private parsed = false;
  private value: unknown = undefined;

  /**
   * `bytes` must be one JSON value that a JSON parser has already accepted, e.g. a member's
   * span of a request body that parsed; it is not checked again here.
   */
  private constructor(readonly bytes: Buffer) {}

  /** The span `[start, end)` of `body`, a JSON text that parsed, holding exactly one value. */
  static ofParsedSpan(body: Buffer, start: number, end: number): RawJson {
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > body.length || start >= end)
      throw new RangeError(`RawJson span [${start}, ${end}) is not within the body of ${body.length} bytes`);
    return new RawJson(body.subarray(start, end));
  }

  /** The value, parsed on first use (what `JSON.stringify` writes for it). */
  toJSON(): unknown {
    if (!this.parsed) {
      this.value = JSON.parse(this.bytes.toString('utf8')) as unknown;
      this.parsed = true;
    }
    return this.value;
  }
}

/** `value` itself, or the parsed value of a {@link RawJson}: for readers that interpret a member. */
export function plainJson(value: unknown): unknown {
  return value instanceof RawJson ? value.toJSON() : value;
}
