import { RawJson } from './raw-json.js';

/**
 * The JSON text of a value as UTF-8 bytes, exactly what `Buffer.from(JSON.stringify(value))`
 * gives, without ever holding that text as one JavaScript string.
 *
 * Why: an agent's request (80 KiB: a system prompt and tool schemas) holds a few characters
 * outside ASCII, so its JSON text is a two-byte string of 160 KiB, which V8 builds as a rope and
 * flattens into its large-object space on the first read — 1–2 ms of the main thread for each
 * encoding, against ~0.3 ms to write it value by value here (each string escaped by
 * `JSON.stringify`, so the escaping is the engine's own). The journal and the OpenAI-compatible
 * provider send every request this way. A {@link RawJson} is written as its bytes.
 */
export function jsonBytes(value: unknown): Buffer {
  const out = new ByteWriter();
  write(out, value, '', []);
  return out.bytes();
}

/** A growing buffer of UTF-8 bytes. */
class ByteWriter {
  private buffer = Buffer.allocUnsafe(4_096);
  private length = 0;

  /** Appends text known to be ASCII (punctuation, numbers, literals). */
  ascii(text: string): void {
    this.reserve(text.length);
    this.length += this.buffer.write(text, this.length, 'latin1');
  }

  /** Appends any text, as UTF-8 (at most 3 bytes per UTF-16 unit). */
  text(text: string): void {
    this.reserve(text.length * 3);
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  /** Appends bytes that are already UTF-8 JSON. */
  raw(bytes: Buffer): void {
    this.reserve(bytes.length);
    this.length += bytes.copy(this.buffer, this.length);
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

/** Whether `JSON.stringify` leaves a member with this value out of an object (`null` in an array). */
const omitted = (value: unknown): boolean =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol';

/**
 * Writes `value` as `JSON.stringify` would; `key` is its key, for `toJSON(key)`; `open` holds the
 * objects and arrays being written around it, so a cycle is refused as JSON refuses it.
 */
function write(out: ByteWriter, raw: unknown, key: string, open: object[]): void {
  if (raw instanceof RawJson) return out.raw(raw.bytes);
  let value = raw;
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  )
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) value = value.valueOf();
  switch (typeof value) {
    case 'string':
      return out.text(JSON.stringify(value));
    case 'number':
      return out.ascii(Number.isFinite(value) ? String(value) : 'null');
    case 'boolean':
      return out.ascii(value ? 'true' : 'false');
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object':
      if (value === null) return out.ascii('null');
      if (open.includes(value)) throw new TypeError('Converting circular structure to JSON');
      open.push(value);
      if (Array.isArray(value)) writeArray(out, value, open);
      else writeObject(out, value as Record<string, unknown>, open);
      open.pop();
      return;
    default:
      return out.ascii('null');
  }
}

function writeArray(out: ByteWriter, array: readonly unknown[], open: object[]): void {
  out.ascii('[');
  for (let i = 0; i < array.length; i++) {
    if (i > 0) out.ascii(',');
    const item = array[i];
    if (omitted(item)) out.ascii('null');
    else write(out, item, String(i), open);
  }
  out.ascii(']');
}

function writeObject(out: ByteWriter, object: Record<string, unknown>, open: object[]): void {
  out.ascii('{');
  let first = true;
  for (const key of Object.keys(object)) {
    const member = object[key];
    if (omitted(member)) continue;
    if (!first) out.ascii(',');
    first = false;
    out.text(JSON.stringify(key));
    out.ascii(':');
    write(out, member, key, open);
  }
  out.ascii('}');
}
