import { describe, expect, test } from 'vitest';
import { mapError, parseJsonBody } from '../../src/wire/index.js';
import { tokensEqual } from '../../src/http/security.js';
import { SubscriberLimitExceededError } from '../../src/events/index.js';
import {
  BranchWhilePromptActiveError,
  InvalidClientIdError,
  PromptQueueFullError,
  SessionClosingError,
  SessionLimitExceededError,
  SessionNotFoundError,
} from '../../src/sessions/errors.js';

describe('the one error table', () => {
  test('BP-8 prompt_queue_full → 503, Retry-After 5, exact body', () => {
    const mapped = mapError(new PromptQueueFullError('s1', 5, 5));
    expect(mapped.statusCode).toBe(503);
    expect(mapped.headers).toEqual({ 'Retry-After': '5' });
    expect(JSON.stringify(mapped.body)).toBe(
      '{"error":"Prompt queue full for session \\"s1\\" (5/5 pending)","code":"prompt_queue_full","sessionId":"s1","limit":5,"pendingCount":5}',
    );
  });

  test('not found and closing share the 404 envelope', () => {
    expect(mapError(new SessionNotFoundError('a'))).toMatchObject({
      statusCode: 404,
      body: { error: 'No session with id "a"', code: 'session_not_found', sessionId: 'a' },
    });
    expect(mapError(new SessionClosingError('a'))).toMatchObject({
      statusCode: 404,
      body: { error: 'No session with id "a"', code: 'session_closing', sessionId: 'a' },
    });
  });

  test('limits, conflicts and client ids', () => {
    expect(mapError(new SessionLimitExceededError(3, 'daemon'))).toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '5' },
      body: { code: 'session_limit_exceeded' },
    });
    expect(mapError(new BranchWhilePromptActiveError('s')).statusCode).toBe(409);
    expect(mapError(new InvalidClientIdError('c', 's'))).toMatchObject({
      statusCode: 400,
      body: { code: 'invalid_client_id', sessionId: 's', clientId: 'c' },
    });
    expect(mapError(new SubscriberLimitExceededError(64)).statusCode).toBe(429);
  });

  test('an unknown error is a 500 without internals', () => {
    expect(mapError(new Error('secret detail'))).toEqual({
      statusCode: 500,
      headers: {},
      body: { error: 'Internal server error' },
    });
  });
});

describe('JSON bodies', () => {
  test('__proto__, constructor and prototype keys are dropped at every depth', () => {
    const body = parseJsonBody(
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"a":{"prototype":2,"b":3}}',
    ) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['a']);
    expect(body['a']).toEqual({ b: 3 });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  test('a forbidden key spelt with \\u escapes is dropped too', () => {
    const body = parseJsonBody('{"c\\u006fnstructor":1,"a":1}') as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['a']);
  });

  test('malformed JSON → 400 Invalid JSON in request body; empty → undefined', () => {
    expect(() => parseJsonBody('{')).toThrow('Invalid JSON in request body');
    expect(mapError(captured(() => parseJsonBody('{')))).toEqual({
      statusCode: 400,
      headers: {},
      body: { error: 'Invalid JSON in request body' },
    });
    expect(parseJsonBody('  ')).toBeUndefined();
  });
});

test('tokensEqual compares secrets of any length', () => {
  expect(tokensEqual('abc', 'abc')).toBe(true);
  expect(tokensEqual('abc', 'abcd')).toBe(false);
  expect(tokensEqual('', 'abc')).toBe(false);
});

function captured(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
