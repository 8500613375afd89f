import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DaemonClient, DaemonHttpError, DaemonTurnError, isDaemonTurnError } from '../src/index.js';
import { json, startScriptServer, type ScriptServer } from './helpers/script-server.js';

let server: ScriptServer;
beforeAll(async () => {
  server = await startScriptServer();
});
afterAll(() => server.close());

const vote = { outcome: { outcome: 'selected' as const, optionId: 'allow' } };

describe('typed errors', () => {
  test('§1 a wire error keeps status, code, body and Retry-After; a body without code gets http_<status>', async () => {
    server.handle((request, res) =>
      request.url.includes('status')
        ? json(res, 404, { error: 'No session with id "x"', code: 'session_not_found', sessionId: 'x' })
        : json(res, 503, { error: 'draining', code: 'daemon_shutting_down' }, { 'Retry-After': '5' }),
    );
    const client = new DaemonClient({ baseUrl: server.url });
    const notFound: unknown = await client.sessionStatus('x').catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(DaemonHttpError);
    expect(notFound).toMatchObject({
      status: 404,
      code: 'session_not_found',
      body: { sessionId: 'x' },
      retryable: false,
    });
    expect(isDaemonTurnError(notFound)).toBe(false);
    const draining: unknown = await client.createOrAttachSession().catch((e: unknown) => e);
    expect(draining).toMatchObject({
      status: 503,
      code: 'daemon_shutting_down',
      retryAfterMs: 5000,
      retryable: true,
    });
    server.handle((_, res) => json(res, 418, 'teapot'));
    await expect(client.health()).rejects.toMatchObject({ status: 418, code: 'http_418' });
  });

  test('§5 a turn_error is a DaemonTurnError: a DaemonHttpError that isDaemonTurnError recognises', () => {
    const error = new DaemonTurnError({
      v: 1,
      type: 'turn_error',
      data: { sessionId: 's', promptId: 'p', message: 'closed', code: 'session_closed' },
    });
    expect(error).toBeInstanceOf(DaemonHttpError);
    expect(isDaemonTurnError(error)).toBe(true);
    expect(error).toMatchObject({ status: 500, code: 'session_closed', promptId: 'p' });
  });

  test('§7 respondToPermission: 200 → true, 404 permission_request_not_found → false, a missing route → DaemonHttpError', async () => {
    const client = new DaemonClient({ baseUrl: server.url });
    server.handle((_, res) => json(res, 200, {}));
    await expect(client.respondToPermission('r1', vote)).resolves.toBe(true);
    server.handle((_, res) =>
      json(res, 404, { error: 'unknown or resolved', code: 'permission_request_not_found' }),
    );
    await expect(client.respondToPermission('r1', vote)).resolves.toBe(false);
    server.handle((request, res) =>
      json(res, 404, { error: `Route ${request.method} ${request.url} not found` }),
    );
    await expect(client.respondToPermission('r1', vote)).rejects.toMatchObject({
      status: 404,
      code: 'http_404',
    });
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', url: '/permission/r1' });
    expect(JSON.parse(server.requests.at(-1)!.body)).toEqual(vote);
  });

  test('§4 closeSession treats 404 as already closed; detach with an unknown session is an error', async () => {
    server.handle((_, res) =>
      json(res, 404, { error: 'No session', code: 'session_not_found', sessionId: 'gone' }),
    );
    const client = new DaemonClient({ baseUrl: server.url, token: 'secret' });
    await expect(client.closeSession('gone')).resolves.toBeUndefined();
    expect(server.requests.at(-1)!.headers['authorization']).toBe('Bearer secret');
    await expect(client.detachSession('gone', 'c1')).rejects.toMatchObject({ code: 'session_not_found' });
  });
});
