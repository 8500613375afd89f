import { RequestError } from '@agentclientprotocol/sdk';
import { describe, expect, test } from 'vitest';
import { ModelTimeoutErrorLike } from './fixtures.js';
import { unsupportedSetting } from '../../src/acp/errors.js';
import { RPC_CODE, toRequestError, withoutEchoes } from '../../src/acp/rpc-errors.js';
import { mapError } from '../../src/wire/index.js';
import { PermissionLimitExceededError, PermissionRequestNotFoundError } from '../../src/permissions/index.js';
import {
  BranchWhilePromptActiveError,
  InvalidPromptError,
  PromptDeadlineExceededError,
  PromptQueueFullError,
  SessionClosedError,
  SessionClosingError,
  SessionLimitExceededError,
  SessionNotFoundError,
} from '../../src/sessions/errors.js';

describe('JSON-RPC error mapping (SPEC BP-10, PROTOCOL §8)', () => {
  test('BP-10 PromptQueueFullError → -32603 with errorKind prompt_queue_full, the figures and httpStatus 503', () => {
    const error = toRequestError(new PromptQueueFullError('s-1', 5, 5));
    expect(error.code).toBe(-32603);
    expect(error.message).toBe('Prompt queue full for session "s-1" (5/5 pending)');
    expect(error.data).toEqual({
      errorKind: 'prompt_queue_full',
      sessionId: 's-1',
      limit: 5,
      pendingCount: 5,
      httpStatus: 503,
    });
  });

  test.each([
    ['session not found', new SessionNotFoundError('s-1'), RPC_CODE.resourceNotFound, 'session_not_found'],
    ['session closing', new SessionClosingError('s-1'), RPC_CODE.resourceNotFound, 'session_closing'],
    [
      'an invalid prompt',
      new InvalidPromptError('got an empty array'),
      RPC_CODE.invalidParams,
      'invalid_prompt',
    ],
    [
      'a session cap',
      new SessionLimitExceededError(3, 'daemon'),
      RPC_CODE.internalError,
      'session_limit_exceeded',
    ],
    [
      'a branch while busy',
      new BranchWhilePromptActiveError('s-1'),
      RPC_CODE.internalError,
      'branch_while_prompt_active',
    ],
    [
      'a deadline',
      new PromptDeadlineExceededError('s', 'p', 10),
      RPC_CODE.internalError,
      'prompt_deadline_exceeded',
    ],
    [
      'a closed session',
      new SessionClosedError('s', 'client_close'),
      RPC_CODE.resourceNotFound,
      'session_closed',
    ],
    [
      'an unknown permission',
      new PermissionRequestNotFoundError('r'),
      RPC_CODE.resourceNotFound,
      'permission_request_not_found',
    ],
    [
      'a permission cap',
      new PermissionLimitExceededError('s', 2),
      RPC_CODE.internalError,
      'permission_limit_exceeded',
    ],
    [
      'an unsupported setting',
      unsupportedSetting('mode', 'yolo'),
      RPC_CODE.invalidParams,
      'unsupported_session_setting',
    ],
  ])(
    'BP-10 %s keeps its stable code as data.errorKind, with the REST message',
    (_name, cause, code, errorKind) => {
      const error = toRequestError(cause);
      expect(error.code).toBe(code);
      expect(error.message).toBe(mapError(cause).body['error']);
      expect(error.data).toMatchObject({ errorKind, httpStatus: expect.any(Number) });
    },
  );

  test('BP-10 the HTTP status of the one error table travels as data.httpStatus', () => {
    expect(toRequestError(new SessionNotFoundError('s')).data).toMatchObject({
      httpStatus: 404,
      sessionId: 's',
    });
    expect(toRequestError(new SessionLimitExceededError(3, 'daemon')).data).toMatchObject({
      httpStatus: 503,
      limit: 3,
    });
  });

  test('BP-10 a runtime error with its own code keeps it (model_queue_timeout)', () => {
    const error = toRequestError(new ModelTimeoutErrorLike());
    expect(error.code).toBe(-32603);
    expect(error.data).toEqual({ errorKind: 'model_queue_timeout' });
    expect(error.message).toBe('queued past the deadline');
  });

  test('BP-10 an untyped failure is errorKind internal and reveals nothing', () => {
    const error = toRequestError(new Error('secret path /etc/shadow'));
    expect(error.code).toBe(-32603);
    expect(error.message).toBe('Internal error');
    expect(error.data).toEqual({ errorKind: 'internal' });
  });

  test('§8 a RequestError passes through unchanged', () => {
    const original = RequestError.invalidParams({ cwd: 'required' });
    expect(toRequestError(original)).toBe(original);
  });
});

describe('withoutEchoes: an ACP answer repeats at most 200 characters of a value (issue 28)', () => {
  test('the SDK’s method-not-found keeps its words but not a 300 KiB method, in message or data', () => {
    const method = 'm'.repeat(300 * 1024);
    const sdk = RequestError.methodNotFound(method);
    const answer = withoutEchoes({
      jsonrpc: '2.0',
      id: 1,
      error: { code: sdk.code, message: sdk.message, data: sdk.data },
    });
    expect(answer.error.message).toBe(`"Method not found": ${'m'.repeat(200)}…`);
    expect(answer.error.data).toEqual({ method: `${'m'.repeat(200)}…` });
    const short = RequestError.methodNotFound('session/nope');
    expect(
      withoutEchoes({ id: 2, error: { code: short.code, message: short.message, data: short.data } }).error,
    ).toEqual({
      code: -32601,
      message: '"Method not found": session/nope',
      data: { method: 'session/nope' },
    });
  });

  test('results and other errors pass unchanged, but for their data’s texts', () => {
    const result = { jsonrpc: '2.0', id: 3, result: { text: 'x'.repeat(1000) } };
    expect(withoutEchoes(result)).toBe(result);
    const error = {
      id: 4,
      error: {
        code: RPC_CODE.invalidParams,
        message: 'bad',
        data: { errorKind: 'k', sessionId: 's'.repeat(300) },
      },
    };
    expect(withoutEchoes(error).error).toEqual({
      code: RPC_CODE.invalidParams,
      message: 'bad',
      data: { errorKind: 'k', sessionId: `${'s'.repeat(200)}…` },
    });
  });
});
