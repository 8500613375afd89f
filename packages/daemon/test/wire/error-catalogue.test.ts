import { readFileSync } from 'node:fs';
import { CodedError, ERROR_CATALOGUE } from '@sluice/protocol';
import { OverloadedError, ProviderError } from '@sluice/runtime';
import { describe, expect, test } from 'vitest';
import { toRequestError } from '../../src/acp/rpc-errors.js';
import { BudgetNotFoundError } from '../../src/budgets/index.js';
import { openAIError } from '../../src/gateway/index.js';
import { SessionClosedError } from '../../src/sessions/errors.js';
import { mapError } from '../../src/wire/index.js';

describe('the error catalogue: each code declares its wire form once', () => {
  test('a transport refusal takes its status and Retry-After from its code, in every transport', () => {
    const refusal = new CodedError('acp_too_many_requests', 'Too many ACP requests in flight');
    expect(mapError(refusal)).toEqual({
      statusCode: 429,
      headers: { 'Retry-After': '1' },
      body: { error: 'Too many ACP requests in flight', code: 'acp_too_many_requests' },
    });
    expect(refusal.retryable).toBe(true);
    expect(openAIError(refusal).body.error).toMatchObject({ type: 'rate_limit_error', code: refusal.code });
    expect(toRequestError(refusal).data).toEqual({ errorKind: 'acp_too_many_requests', httpStatus: 429 });
  });

  test('a domain error states its body fields; its status and retryable come from the catalogue', () => {
    const error = new BudgetNotFoundError('b-1');
    expect(mapError(error)).toEqual({
      statusCode: ERROR_CATALOGUE.budget_not_found.status,
      headers: {},
      body: {
        error: 'No budget with id "b-1"; create it with POST /budgets',
        code: 'budget_not_found',
        budgetId: 'b-1',
      },
    });
    expect(error.retryable).toBe(ERROR_CATALOGUE.budget_not_found.retryable);
    expect(JSON.stringify(mapError(new SessionClosedError('s', 'client_close')).body)).toBe(
      '{"error":"No session with id \\"s\\"","code":"session_closed","sessionId":"s"}',
    );
  });

  test('an instance may refine its form: the scheduler estimate, an upstream answer', () => {
    expect(mapError(new OverloadedError('QueueFull', 4, 2_500)).headers).toEqual({ 'Retry-After': '3' });
    const upstream = new ProviderError('upstream said no', true, 429, {
      upstream: { status: 429, error: { message: 'slow down' }, retryAfter: '7' },
    });
    expect(mapError(upstream)).toEqual({
      statusCode: 429,
      headers: { 'Retry-After': '7' },
      body: { error: 'upstream said no', code: 'model_provider_error', upstream: { message: 'slow down' } },
    });
    expect(upstream.retryable).toBe(true);
  });

  test('every form is a real status, and only a refusal for now says when to retry', () => {
    for (const [code, form] of Object.entries(ERROR_CATALOGUE)) {
      expect(form.status, code).toBeGreaterThanOrEqual(400);
      expect(form.status, code).toBeLessThan(600);
      if ('retryAfter' in form) expect([429, 503], code).toContain(form.status);
    }
  });

  test('the error map knows no domain folder and needs no casts', () => {
    const source = readFileSync(new URL('../../src/wire/error-map.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
    expect(imports).toEqual(['@sluice/protocol']);
    expect(source).not.toContain('as unknown as');
  });
});
