import { RawJson } from '../raw-json.js';

const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Nesting deeper than this is refused like a cycle: no model request is nested this deep. */
const MAX_DEPTH = 256;

/**
 * Counts the UTF-8 bytes `JSON.stringify(value)` would produce, stopping as soon as the count
 * exceeds `limit` — so an oversized request is refused without building its JSON (SCH-17).
 * Returns the exact byte count when it is ≤ `limit`, otherwise some number > `limit`. A
 * {@link RawJson} counts as its bytes, which is what the journal and the upstream receive.
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
  if (raw instanceof RawJson) {
    counter.bytes += raw.bytes.length;
    return true;
  }
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

/**
 * An upper bound of {@link jsonByteLength} that reads no string's characters: a string counts
 * as if every UTF-16 unit took six bytes (`\uXXXX`, the most JSON can write for one), so the
 * walk costs the structure alone. A request well under the limit is proven to fit by this
 * bound; only one near it needs the exact count. Returns some number > `limit` as soon as the
 * bound passes it. Visits what `jsonByteLength` visits, in the same order, so it throws for
 * the same values (cycles, BigInt, nesting over 256).
 */
export function jsonByteBound(value: unknown, limit: number): number {
  const bound = boundValue(value, 0, limit);
  return bound < 0 ? 0 : bound;
}

/** Longest `JSON.stringify` of a finite number, e.g. `-0.0000012345678901234567`. */
const MAX_NUMBER_LENGTH = 25;

// The walk dispatches on the type where it reads a value, and counts strings — most leaves of
// a request — in place, so that each helper sees one kind of value and calls stay few.

/** The bound of `value`'s JSON within `budget`; -1 when JSON omits it (undefined, functions, symbols). */
function boundValue(value: unknown, depth: number, budget: number): number {
  switch (typeof value) {
    case 'string':
      return value.length * 6 + 2;
    case 'object':
      if (value === null) return 4;
      return Array.isArray(value) ? boundArray(value, depth, budget) : boundObject(value, depth, budget);
    case 'number':
      if (!Number.isFinite(value)) return 4;
      return Number.isSafeInteger(value) ? jsonNumberLength(value) : MAX_NUMBER_LENGTH;
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      return -1;
  }
}

function boundMember(value: unknown, depth: number, budget: number): number {
  if (typeof value !== 'object' || value === null) return boundValue(value, depth, budget);
  return Array.isArray(value) ? boundArray(value, depth, budget) : boundObject(value, depth, budget);
}

function boundArray(array: unknown[], depth: number, budget: number): number {
  if (typeof (array as { toJSON?: unknown }).toJSON === 'function')
    return boundValue((array as unknown as { toJSON: () => unknown }).toJSON(), depth, budget);
  if (depth >= MAX_DEPTH)
    throw new TypeError(`Converting circular structure to JSON (or nesting deeper than ${MAX_DEPTH})`);
  const length = array.length;
  let bytes = length > 0 ? length + 1 : 2; // brackets and commas
  for (let i = 0; i < length && bytes <= budget; i++) {
    const item = array[i];
    if (typeof item === 'string') {
      bytes += item.length * 6 + 2;
      continue;
    }
    const bound = boundMember(item, depth + 1, budget - bytes);
    bytes += bound < 0 ? 4 : bound; // an omitted item is written as null
  }
  return bytes;
}

function boundObject(object: object, depth: number, budget: number): number {
  if (object instanceof RawJson) return object.bytes.length;
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function')
    return boundValue((object as { toJSON: () => unknown }).toJSON(), depth, budget);
  if (depth >= MAX_DEPTH)
    throw new TypeError(`Converting circular structure to JSON (or nesting deeper than ${MAX_DEPTH})`);
  if (object instanceof Number || object instanceof String || object instanceof Boolean)
    return boundValue(object.valueOf(), depth, budget);
  let bytes = 1; // the opening brace; each member adds its key, colon, value and a comma or the closing brace
  for (const key in object) {
    if (bytes > budget) break;
    if (!hasOwn.call(object, key)) continue;
    const member = (object as Record<string, unknown>)[key];
    if (typeof member === 'string') {
      bytes += (key.length + member.length) * 6 + 6;
      continue;
    }
    // The key counts before its value is walked, as in the exact walk, so the bound never passes
    // the budget later than the exact count would (a cycle is cut off by the budget alike).
    const keyBytes = key.length * 6 + 4;
    const bound = boundMember(member, depth + 1, budget - bytes - keyBytes);
    if (bound >= 0) bytes += keyBytes + bound;
  }
  return bytes === 1 ? 2 : bytes;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** Length of `JSON.stringify(n)` for a finite number. */
export function jsonNumberLength(n: number): number {
  if (Number.isInteger(n) && n >= 0 && n < 1e21) {
    let digits = 1;
    while (digits < 21 && n >= POWERS_OF_TEN[digits]!) digits++;
    return digits;
  }
  return String(n).length;
}

/** 10^0 … 10^20, exact as doubles: a digit count by comparison instead of division. */
const POWERS_OF_TEN: readonly number[] = Array.from({ length: 21 }, (_, i) => 10 ** i);

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
