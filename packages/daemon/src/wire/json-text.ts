/** Keys dropped from every JSON body (prototype pollution guard, PROTOCOL §1). */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A body that is not JSON: `400 {"error":"Invalid JSON in request body"}` without a code, as
 * fastify answers one it parsed itself (the `statusCode` of a client mistake is kept, wire/error-map.ts).
 */
export class MalformedJsonError extends Error {
  readonly statusCode = 400;
  constructor() {
    super('Invalid JSON in request body');
  }
}

const MAY_HOLD_FORBIDDEN_KEY = /proto|constructor|\\u/;

function reviver(key: string, value: unknown): unknown {
  return FORBIDDEN_KEYS.has(key) ? undefined : value;
}

/** Parses JSON text the way every route sees it; an empty body is `undefined`. */
export function parseJsonBody(text: string): unknown {
  if (text.trim().length === 0) return undefined;
  try {
    // The reviver costs a call per value; only texts that could hold a forbidden key pay it
    // (every such key contains "proto" or "constructor", unless spelt with a \u escape).
    return MAY_HOLD_FORBIDDEN_KEY.test(text) ? JSON.parse(text, reviver) : JSON.parse(text);
  } catch {
    throw new MalformedJsonError();
  }
}
