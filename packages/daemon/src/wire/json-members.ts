/** Where one member's value stands in a JSON text, and how deep it nests. */
export interface MemberSpan {
  /** Byte offset of the value's first byte. */
  start: number;
  /** Byte offset just past the value's last byte. */
  end: number;
  /** Levels of objects and arrays in the value: 0 for a scalar, 1 for `[1, 2]`. */
  depth: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * The spans of the top-level members named in `wanted` of `body`, the UTF-8 bytes of a JSON
 * object that already parsed (a duplicate key: its last value, as `JSON.parse` keeps). Strings
 * are skipped with a native search for their closing quote, so the cost is the structure, not
 * the text. Undefined where `body` does not read as an object (it is then not used raw).
 */
export function topLevelMembers(
  body: Buffer,
  wanted: ReadonlySet<string>,
): Map<string, MemberSpan> | undefined {
  const spans = new Map<string, MemberSpan>();
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(body, i + 1);
  if (body[i] === CLOSE_BRACE) return spans;
  for (;;) {
    if (body[i] !== QUOTE) return undefined;
    const keyEnd = stringEnd(body, i);
    if (keyEnd < 0) return undefined;
    const key = keyOf(body, i, keyEnd);
    i = skipSpace(body, keyEnd);
    if (body[i] !== COLON) return undefined;
    const start = skipSpace(body, i + 1);
    const value = valueEnd(body, start);
    if (value === undefined) return undefined;
    if (key !== undefined && wanted.has(key)) spans.set(key, { start, end: value.end, depth: value.depth });
    i = skipSpace(body, value.end);
    if (body[i] === CLOSE_BRACE) return spans;
    if (body[i] !== COMMA) return undefined;
    i = skipSpace(body, i + 1);
  }
}

/** The key the string literal `[start, end)` spells; undefined when it is not valid JSON. */
function keyOf(body: Buffer, start: number, end: number): string | undefined {
  const text = body.toString('utf8', start, end);
  if (!text.includes('\\')) return text.slice(1, -1);
  try {
    return JSON.parse(text) as string;
  } catch {
    return undefined;
  }
}

function skipSpace(body: Buffer, from: number): number {
  let i = from;
  for (let c = body[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = body[++i]);
  return i;
}

/** Offset just past the string literal opening at `start`; -1 when it never closes. */
function stringEnd(body: Buffer, start: number): number {
  let quote = body.indexOf(QUOTE, start + 1);
  while (quote >= 0) {
    let backslashes = 0;
    while (body[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    quote = body.indexOf(QUOTE, quote + 1);
  }
  return -1;
}

/** The end and depth of the value starting at `start`. */
function valueEnd(body: Buffer, start: number): { end: number; depth: number } | undefined {
  const first = body[start];
  if (first === QUOTE) {
    const end = stringEnd(body, start);
    return end < 0 ? undefined : { end, depth: 0 };
  }
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let i = start;
    for (let c = body[i]; c !== undefined && c !== COMMA && c !== CLOSE_BRACE && c > 0x20; c = body[++i]);
    return i === start ? undefined : { end: i, depth: 0 };
  }
  let level = 0;
  let deepest = 0;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (c === QUOTE) {
      const end = stringEnd(body, i);
      if (end < 0) return undefined;
      i = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++level > deepest) deepest = level;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--level === 0) return { end: i + 1, depth: deepest };
    }
  }
  return undefined;
}
