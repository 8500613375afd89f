import SwaggerParser from '@apidevtools/swagger-parser';
import type * as FastifyModule from 'fastify';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { api, textPrompt } from '../helpers/http-client.js';
import { DaemonTap } from '../../src/observe/daemon-tap.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Every route fastify registers, as the server registers it: the real fastify, with an onRoute
// hook installed the moment the server creates its instance (routes cannot be listed later).
const registered = vi.hoisted(() => new Set<string>());
vi.mock('fastify', async (importOriginal) => {
  const original = await importOriginal<typeof FastifyModule>();
  const fastify = original.default as unknown as (...args: unknown[]) => FastifyInstance;
  const create = ((...args: unknown[]) => {
    const app = fastify(...args);
    app.addHook('onRoute', (route: RouteOptions) => {
      for (const method of [route.method].flat())
        // fastify adds a HEAD route to every GET (exposeHeadRoutes); it answers like its GET.
        if (method !== 'HEAD') registered.add(`${method} ${route.url}`);
    });
    return app;
  }) as typeof original.default;
  return { ...original, default: create };
});

type Operation = {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
};
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

let sluice: InProcessDaemon;
let document: Document;
let contentType: string | undefined;

beforeAll(async () => {
  // As `serve` builds it: with the counters behind /metrics and /dashboard.
  sluice = await startInProcess({}, { tap: new DaemonTap() });
  const response = await api(sluice.url, 'GET', '/openapi.json');
  expect(response.status).toBe(200);
  contentType = response.headers['content-type'];
  document = response.body as Document;
});
afterAll(async () => {
  await sluice?.stop();
});

/** `METHOD /fastify/:style` of every operation in the document. */
function documentedRoutes(): Set<string> {
  const routes = new Set<string>();
  for (const [path, operations] of Object.entries(document.paths))
    for (const method of Object.keys(operations))
      routes.add(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
  return routes;
}

describe('GET /openapi.json', () => {
  test('servers names the address the request reached, whatever the port (not the default :4170)', async () => {
    expect((document as unknown as { servers: unknown }).servers).toEqual([
      { url: sluice.url, description: 'This daemon, as this request reached it' },
    ]);
    const port = new URL(sluice.url).port;
    const viaLocalhost = await api(sluice.url, 'GET', '/openapi.json', {
      headers: { Host: `localhost:${port}` },
    });
    expect((viaLocalhost.body as { servers: Array<{ url: string }> }).servers[0]!.url).toBe(
      `http://localhost:${port}`,
    );
    // the rest of the document is the one built once
    expect({ ...(viaLocalhost.body as object), servers: [] }).toEqual({ ...document, servers: [] });
  });

  test('is served as JSON and validates as an OpenAPI 3.1 document', async () => {
    expect(contentType).toMatch(/^application\/json/);
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  test('the server registers exactly the routes of the one route list', async () => {
    // A route registered outside routes/index.ts (or listed but not mounted) fails here.
    const { servedRoutes } = await import('../../src/http/routes/index.js');
    const listed = servedRoutes(true, true).map((route) => `${route.method} ${route.path}`);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...registered].sort()).toEqual(listed.sort());
  });

  test('lists every route the server registers, and only those', () => {
    expect(registered.size).toBeGreaterThan(20);
    expect([...documentedRoutes()].sort()).toEqual([...registered].sort());
  });

  test('describes the SSE routes as event streams and /acp as JSON-RPC', () => {
    const events = document.paths['/session/{id}/events']!['get']!;
    expect(Object.keys(events.responses['200']!.content!)).toEqual(['text/event-stream']);
    expect(events.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['path:id', 'query:maxQueued', 'header:Last-Event-ID']),
    );
    const acp = document.paths['/acp']!;
    expect(Object.keys(acp).sort()).toEqual(['delete', 'get', 'post']);
    expect(Object.keys(acp['get']!.responses['200']!.content!)).toEqual(['text/event-stream']);
    expect(JSON.stringify(acp['post']!.requestBody)).toContain('"jsonrpc"');
    const completions = document.paths['/v1/chat/completions']!['post']!.responses['200']!.content!;
    expect(Object.keys(completions).sort()).toEqual(['application/json', 'text/event-stream']);
  });

  test('documents 429 rate_limit_exceeded and the rate tier on every limited route, on no exempt one', () => {
    const tierOf = (method: string, path: string): unknown => {
      const operation = document.paths[path]![method] as Operation & { 'x-sluice-rate-tier'?: string };
      const limited = JSON.stringify(operation.responses['429'] ?? null).includes('RateLimited');
      return limited ? operation['x-sluice-rate-tier'] : 'exempt';
    };
    expect(tierOf('post', '/session/{id}/prompt')).toBe('prompt');
    expect(tierOf('post', '/session')).toBe('mutation');
    expect(tierOf('delete', '/session/{id}')).toBe('mutation');
    expect(tierOf('get', '/capabilities')).toBe('read');
    const exempt = [
      ['get', '/health'],
      ['get', '/session/{id}/events'],
      ['post', '/session/{id}/heartbeat'],
      ['post', '/acp'],
      ['get', '/acp'],
      ['delete', '/acp'],
      ['get', '/v1/models'],
      ['post', '/v1/chat/completions'],
      ['get', '/metrics'],
      ['get', '/dashboard/stream'],
    ];
    expect(exempt.map(([method, path]) => tierOf(method!, path!))).toEqual(exempt.map(() => 'exempt'));
  });

  test('describes request bodies from the schemas the routes validate with', () => {
    const create = JSON.stringify(document.paths['/session']!['post']!.requestBody);
    expect(create).toContain('"enum":["single","thread"]');
    const prompt = JSON.stringify(document.paths['/session/{id}/prompt']!['post']!.requestBody);
    expect(prompt).toContain('"minItems":1');
    expect(prompt).toContain('"maximum":2147483647');
  });

  test('is built once: a second request gets the same bytes', async () => {
    const [first, second] = await Promise.all([
      api(sluice.url, 'GET', '/openapi.json'),
      api(sluice.url, 'GET', '/openapi.json'),
    ]);
    expect(second.text).toBe(first.text);
    expect(JSON.parse(first.text)).toEqual(document);
  });
});

test('a daemon with a token asks for it on /openapi.json, as on every route but /health', async () => {
  const guarded = await startInProcess({}, {}, { token: 'secret-token' });
  try {
    expect((await api(guarded.url, 'GET', '/openapi.json')).status).toBe(401);
    const authorized = await api(guarded.url, 'GET', '/openapi.json', {
      headers: { authorization: 'Bearer secret-token' },
    });
    expect(authorized.status).toBe(200);
    expect(authorized.body.openapi).toBe('3.1.0');
  } finally {
    await guarded.stop();
  }
});

test('the routes answer with the success shapes the document describes', async () => {
  const { ROUTES } = await import('../../src/http/routes/index.js');
  const docs = new Map(ROUTES.map((route) => [`${route.method} ${route.path}`, route]));
  const expectShape = (route: string, status: number, body: unknown): void => {
    const schema = docs.get(route)?.responses[status]?.schema;
    expect(schema, route).toBeDefined();
    const result = schema!.safeParse(body);
    expect(result.success, `${route} ${status}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
  };
  const call = async (method: string, path: string, route: string, status: number, body?: unknown) => {
    const response = await api(sluice.url, method, path, body === undefined ? {} : { body });
    expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
    expectShape(route, status, response.body);
    return response.body;
  };
  await call('GET', '/health', 'GET /health', 200);
  await call('GET', '/capabilities', 'GET /capabilities', 200);
  await call('GET', '/runtime/snapshot', 'GET /runtime/snapshot', 200);
  await call('GET', '/v1/models', 'GET /v1/models', 200);
  const { sessionId, clientId } = await call('POST', '/session', 'POST /session', 200, {
    sessionScope: 'thread',
  });
  const s = `/session/${sessionId}`;
  const { promptId } = await call('POST', `${s}/prompt`, 'POST /session/:id/prompt', 202, textPrompt('hi'));
  await call('GET', `${s}/pending-prompts`, 'GET /session/:id/pending-prompts', 200);
  await call('GET', `${s}/status`, 'GET /session/:id/status', 200);
  await call('GET', `${s}/prompts/${promptId}/calls`, 'GET /session/:id/prompts/:promptId/calls', 200);
  const heartbeat = await api(sluice.url, 'POST', `${s}/heartbeat`, {
    headers: { 'x-qwen-client-id': clientId },
  });
  expectShape('POST /session/:id/heartbeat', 200, heartbeat.body);
  const workspace = encodeURIComponent(sluice.daemon.config.workspace);
  await call('GET', `/workspace/${workspace}/sessions`, 'GET /workspace/:cwd/sessions', 200);
  await call('POST', `${s}/resume`, 'POST /session/:id/resume', 200, {});
  await call(
    'DELETE',
    `${s}/pending-prompts/${promptId}`,
    'DELETE /session/:id/pending-prompts/:promptId',
    200,
  );
  await call('POST', '/v1/chat/completions', 'POST /v1/chat/completions', 200, {
    messages: [{ role: 'user', content: 'hi' }],
  });
  await call('GET', '/daemon/sessions', 'GET /daemon/sessions', 200);
  await call('POST', '/budgets', 'POST /budgets', 201, { budgetId: 'docs', limits: { maxCalls: 3 } });
  await call('GET', '/budgets/docs', 'GET /budgets/:id', 200);
  const { promptId: reported } = await call('POST', `${s}/prompt`, 'POST /session/:id/prompt', 202, {
    ...textPrompt('on a budget'),
    budgetId: 'docs',
  });
  await expect
    .poll(async () => (await api(sluice.url, 'GET', `${s}/prompts/${reported}/report`)).status)
    .toBe(200);
  await call('GET', `${s}/prompts/${reported}/report`, 'GET /session/:id/prompts/:promptId/report', 200);
});

test('a daemon without its counters (--no-metrics) documents no /metrics and no /dashboard', async () => {
  const bare = await startInProcess();
  try {
    const paths = Object.keys((await api(bare.url, 'GET', '/openapi.json')).body.paths as object);
    expect(paths).not.toContain('/metrics');
    expect(paths).not.toContain('/dashboard');
    expect(paths).toContain('/budgets');
  } finally {
    await bare.stop();
  }
});
