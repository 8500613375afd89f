/** How many characters of a bad value an error message quotes (issue 19: no 9 MiB echoes). */
export const DESCRIBED_VALUE_MAX_CHARS = 200;

/** How deep inside arrays and objects a description looks before it writes `…`. */
const MAX_DEPTH = 3;

/**
 * Describes a value for an error message that quotes what a client sent: JSON-like, at most
 * `maxChars` characters (longer text ends in `…`), and safe at any depth or size — unlike
 * `JSON.stringify`, which copies a 9 MiB string whole and overflows the stack on a value nested
 * thousands of levels deep. Containers are described to a depth of three.
 */
export function describeValue(value: unknown, maxChars: number = DESCRIBED_VALUE_MAX_CHARS): string {
  const out = new BoundedText(maxChars);
  write(value, 0, out);
  return out.text();
}

/**
 * `text` as it may be repeated in an error body: whole when it has at most `maxChars`
 * characters, else its first `maxChars` followed by `…` (issue 28: no 9 MiB echoes). For a
 * field of an error's body that carries a client's value verbatim (an id, a path, a header).
 */
export function clipText(text: string, maxChars: number = DESCRIBED_VALUE_MAX_CHARS): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}…`;
}

/** Collects text up to a limit and remembers whether anything was cut. */
class BoundedText {
  private readonly parts: string[] = [];
  private length = 0;
  private cut = false;

  constructor(private readonly max: number) {}

  get full(): boolean {
    return this.length >= this.max;
  }

  add(part: string): void {
    if (this.full) {
      this.cut ||= part.length > 0;
      return;
    }
    const room = this.max - this.length;
    if (part.length > room) {
      this.parts.push(part.slice(0, room));
      this.length = this.max;
      this.cut = true;
      return;
    }
    this.parts.push(part);
    this.length += part.length;
  }

  text(): string {
    return this.parts.join('') + (this.cut ? '…' : '');
  }
}

function write(value: unknown, depth: number, out: BoundedText): void {
  if (out.full) return out.add('…');
  switch (typeof value) {
    case 'string':
      // Only the prefix that can be shown is quoted: a 9 MiB string is never copied whole.
      return out.add(JSON.stringify(value.slice(0, DESCRIBED_VALUE_MAX_CHARS + 1)));
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
    case 'symbol':
      return out.add(String(value));
    case 'function':
      return out.add('a function');
  }
  if (value === null) return out.add('null');
  if (depth >= MAX_DEPTH) return out.add(Array.isArray(value) ? '[…]' : '{…}');
  if (Array.isArray(value)) return writeArray(value, depth, out);
  writeObject(value as Record<string, unknown>, depth, out);
}

function writeArray(items: readonly unknown[], depth: number, out: BoundedText): void {
  out.add('[');
  for (let i = 0; i < items.length && !out.full; i++) {
    if (i > 0) out.add(',');
    write(items[i], depth + 1, out);
  }
  out.add(']');
}

function writeObject(object: Record<string, unknown>, depth: number, out: BoundedText): void {
  out.add('{');
  let first = true;
  for (const key in object) {
    if (out.full) break;
    if (!Object.prototype.hasOwnProperty.call(object, key)) continue;
    if (!first) out.add(',');
    first = false;
    out.add(`${JSON.stringify(key.slice(0, DESCRIBED_VALUE_MAX_CHARS))}:`);
    write(object[key], depth + 1, out);
  }
  out.add('}');
}
