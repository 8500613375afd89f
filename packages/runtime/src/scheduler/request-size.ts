/**
 * Counts the UTF-8 bytes `JSON.stringify(value)` would produce, stopping as soon as the count
 * exceeds `limit` — so an oversized request is refused without building its JSON (SCH-17).
 * Returns the exact byte count when it is ≤ `limit`, otherwise some number > `limit`.
 */
export function jsonByteLength(value: unknown, limit: number): number {
  const counter = { bytes: 0, limit };
  const visiting = new Set<object>();
  countValue(value, counter, visiting, true);
  return counter.bytes;
}

interface Counter {
  bytes: number;
  limit: number;
}

/** Returns false when `value` is omitted by JSON (undefined, functions, symbols) in an object. */
function countValue(raw: unknown, counter: Counter, visiting: Set<object>, topLevel: boolean): boolean {
  if (counter.bytes > counter.limit) return true;
  let value = raw;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
      countString(value, counter);
      return true;
    case 'number':
      counter.bytes += Number.isFinite(value) ? String(value).length : 4;
      return true;
    case 'boolean':
      counter.bytes += value ? 4 : 5;
      return true;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'undefined':
    case 'function':
    case 'symbol':
      if (topLevel) counter.bytes += 0;
      return false;
  }
  if (value === null) {
    counter.bytes += 4;
    return true;
  }
  const object = value as object;
  if (object instanceof Number || object instanceof String || object instanceof Boolean) {
    return countValue(object.valueOf(), counter, visiting, topLevel);
  }
  if (visiting.has(object)) throw new TypeError('Converting circular structure to JSON');
  visiting.add(object);
  if (Array.isArray(object)) {
    counter.bytes += 2; // []
    for (let i = 0; i < object.length && counter.bytes <= counter.limit; i++) {
      if (i > 0) counter.bytes += 1;
      if (!countValue(object[i], counter, visiting, false)) counter.bytes += 4; // null
    }
  } else {
    counter.bytes += 2; // {}
    let first = true;
    for (const key of Object.keys(object)) {
      if (counter.bytes > counter.limit) break;
      const before = counter.bytes;
      if (!first) counter.bytes += 1;
      countString(key, counter);
      counter.bytes += 1; // :
      if (countValue((object as Record<string, unknown>)[key], counter, visiting, false)) first = false;
      else counter.bytes = before; // omitted member
    }
  }
  visiting.delete(object);
  return true;
}

function countString(text: string, counter: Counter): void {
  let bytes = 2; // quotes
  const budget = counter.limit - counter.bytes;
  for (let i = 0; i < text.length && bytes <= budget; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20) bytes += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) bytes += 2;
    else if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 6; // lone surrogate → \udXXX
    } else if (c >= 0xdc00 && c <= 0xdfff) bytes += 6;
    else bytes += 3;
  }
  counter.bytes += bytes;
}
