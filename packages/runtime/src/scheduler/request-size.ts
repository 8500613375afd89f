const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Nesting deeper than this is refused like a cycle: no model request is nested this deep. */
const MAX_DEPTH = 256;

/**
 * Counts the UTF-8 bytes `JSON.stringify(value)` would produce, stopping as soon as the count
 * exceeds `limit` — so an oversized request is refused without building its JSON (SCH-17).
 * Returns the exact byte count when it is ≤ `limit`, otherwise some number > `limit`.
 * Throws a TypeError for values JSON cannot represent (cycles, BigInt, nesting over 256).
 */
export function jsonByteLength(value: unknown, limit: number): number {
  const counter: Counter = { bytes: 0, limit };
  countValue(value, counter, 0);
  return counter.bytes;
}

interface Counter {
  bytes: number;
  limit: number;
}

/** Adds `raw`'s JSON bytes; returns false when JSON omits it (undefined, functions, symbols). */
function countValue(raw: unknown, counter: Counter, depth: number): boolean {
  let value = raw;
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
      counter.bytes += jsonStringBytes(value, counter.limit - counter.bytes);
      return true;
    case 'number':
      counter.bytes += Number.isFinite(value) ? jsonNumberLength(value) : 4;
      return true;
    case 'boolean':
      counter.bytes += value ? 4 : 5;
      return true;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) {
    counter.bytes += 4;
    return true;
  }
  if (depth >= MAX_DEPTH)
    throw new TypeError(`Converting circular structure to JSON (or nesting deeper than ${MAX_DEPTH})`);
  if (Array.isArray(value)) {
    counter.bytes += 2 + Math.max(0, value.length - 1); // brackets and commas
    for (let i = 0; i < value.length && counter.bytes <= counter.limit; i++) {
      if (!countValue(value[i], counter, depth + 1)) counter.bytes += 4; // null
    }
    return true;
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return countValue(value.valueOf(), counter, depth);
  }
  counter.bytes += 2; // braces
  let members = 0;
  const object = value as Record<string, unknown>;
  for (const key in object) {
    if (counter.bytes > counter.limit) break;
    if (!Object.prototype.hasOwnProperty.call(object, key)) continue;
    const before = counter.bytes;
    counter.bytes += jsonStringBytes(key, Infinity) + 1 + (members > 0 ? 1 : 0); // key, colon, comma
    if (countValue(object[key], counter, depth + 1)) members++;
    else counter.bytes = before; // omitted member
  }
  return true;
}

/** Length of `JSON.stringify(n)` for a finite number. */
export function jsonNumberLength(n: number): number {
  if (Number.isInteger(n) && n >= 0 && n < 1e21) {
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    return digits;
  }
  return String(n).length;
}

/** JSON bytes of `text` with its quotes, counting at most a little past `budget`. */
export function jsonStringBytes(text: string, budget: number): number {
  const length = text.length;
  // Every character takes at least one byte: a string that long is over budget already.
  if (length + 2 > budget) return length + 2;
  // Printable ASCII without quote or backslash is one byte a character (the common case): the
  // regular expression is faster on long strings, a plain loop on short ones.
  if (length > 64) {
    if (PLAIN_ASCII.test(text)) return length + 2;
  } else {
    let i = 0;
    for (; i < length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) break;
    }
    if (i === length) return length + 2;
  }
  let bytes = 2;
  for (let i = 0; i < length && bytes <= budget; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) bytes += 1;
      else if (c === 0x22 || c === 0x5c || c === 8 || c === 9 || c === 10 || c === 12 || c === 13) bytes += 2;
      else bytes += 6;
    } else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 6; // lone surrogate → \udXXX
    } else if (c >= 0xdc00 && c <= 0xdfff) bytes += 6;
    else bytes += 3;
  }
  return bytes;
}
