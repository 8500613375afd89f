import * as z from 'zod/mini';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import {
  initializeAcpConnection,
  openAcpStream,
  type AcpFrame,
  type AcpStream,
} from '../helpers/acp-client.js';
import { api } from '../helpers/http-client.js';
import { servedRoutes } from '../../src/http/routes/index.js';
import type { Route } from '../../src/http/route.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Issue 28 item 5: `workspace_mismatch` answered a 9 MiB `cwd` whole. No error body repeats more
// than 256 characters of a value a client sent: every route of the one route list gets a
// 300 KiB string in each path parameter, each string field of its body schema and `cwd` (and,
// since node refuses headers over 16 KiB, an 8 KiB one in each header and query field it reads).

const CHAR = 'q';
const BIG = CHAR.repeat(300 * 1024);
/** What fits in a request line or header under node's 16 KiB limit, so the route reads it. */
const HEADER_SIZED = CHAR.repeat(8 * 1024);
const ECHO = CHAR.repeat(257);
/** The daemon's workspace: the directory it was started in. */
const WORKSPACE = process.cwd();

let sluice: SluiceProcess;
let sessionId: string;
let acpConnection: string;
beforeAll(async () => {
  sluice = await startSluice(['--echo-delay-ms', '1']);
  sessionId = (await api(sluice.url, 'POST', '/session', { body: {} })).body.sessionId;
  acpConnection = await initializeAcpConnection(sluice.url);
});
afterAll(async () => {
  await sluice?.stop();
});

type JsonSchema = Record<string, unknown>;

/** The paths (keys, `0` for an array item) of every string field of a JSON schema. */
function stringFields(
  schema: JsonSchema,
  at: Array<string | number> = [],
  depth = 0,
): Array<Array<string | number>> {
  if (depth > 6) return [];
  const found: Array<Array<string | number>> = [];
  if (schema['type'] === 'string') found.push(at);
  const properties = schema['properties'] as Record<string, JsonSchema> | undefined;
  for (const [key, child] of Object.entries(properties ?? {}))
    found.push(...stringFields(child, [...at, key], depth + 1));
  const items = schema['items'] as JsonSchema | undefined;
  if (items !== undefined) found.push(...stringFields(items, [...at, 0], depth + 1));
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const option of (schema[key] as JsonSchema[] | undefined) ?? [])
      found.push(...stringFields(option, at, depth + 1));
  return found;
}

function schemaOf(type: z.ZodMiniType | undefined): JsonSchema {
  return type === undefined
    ? {}
    : (z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as JsonSchema);
}

/** A body with `value` at `path` (arrays and objects made on the way). */
function bodyWith(path: Array<string | number>, value: string): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === 'number') return [bodyWith(rest, value)];
  return { [head as string]: bodyWith(rest, value) };
}

/** The route's path with `:name` replaced by `value`, every other parameter by the live session. */
function fill(route: Route, name: string | undefined, value: string): string {
  return route.path.replace(/:(\w+)/g, (_all, param: string) =>
    encodeURIComponent(param === name ? value : param === 'cwd' ? WORKSPACE : sessionId),
  );
}

const ROUTES = servedRoutes(true, true);
const driven = new Set<string>();
/** Every echo found, so one run names them all. */
const echoes: string[] = [];

async function expectNoEcho(method: string, path: string, options: Parameters<typeof api>[3], label: string) {
  let text: string;
  try {
    const res = await api(sluice.url, method, path, { streamHead: true, ...options });
    // A success may name what was asked for (a completion names its model): errors only.
    if (res.status < 400 && res.body?.error === undefined) return;
    text = res.text;
  } catch (error) {
    // node closed the connection on a request line over its header limit: nothing was echoed.
    expect(String(error), label).toMatch(/ECONNRESET|EPIPE|socket hang up/);
    return;
  }
  const at = text.indexOf(ECHO);
  if (at !== -1) echoes.push(`${label} echoed: ${text.slice(Math.max(0, at - 100), at + 20)}…`);
}

afterEach(() => {
  expect(echoes.splice(0)).toEqual([]);
});

test('issue 28 item 5: no error body on any route repeats more than 256 characters of a value', async () => {
  for (const route of ROUTES) {
    const label = `${route.method} ${route.path}`;
    driven.add(label);
    const params = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1] as string);
    for (const param of params)
      for (const value of [BIG, HEADER_SIZED, `/${HEADER_SIZED}`])
        await expectNoEcho(
          route.method,
          fill(route, param, value),
          {},
          `${label} :${param} (${value.length})`,
        );
    const live = fill(route, undefined, '');
    for (const header of Object.keys(route.headers ?? {}))
      await expectNoEcho(route.method, live, { headers: { [header]: HEADER_SIZED } }, `${label} ${header}`);
    for (const field of Object.keys((schemaOf(route.query)['properties'] as object | undefined) ?? {}))
      await expectNoEcho(route.method, `${live}?${field}=${HEADER_SIZED}`, {}, `${label} ?${field}`);
    if (route.method === 'GET') continue;
    const fields = [...stringFields(schemaOf(route.body?.schema)), ['cwd']];
    for (const field of fields)
      for (const value of [BIG, `/${BIG}`])
        await expectNoEcho(
          route.method,
          live,
          { body: bodyWith(field, value) },
          `${label} body ${field.join('.')}`,
        );
  }
  expect([...driven].sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort());
}, 240_000);

test('issue 28 item 5: model gateway calls naming a 300 KiB budget, model or message echo none of it', async () => {
  const calls = [
    { body: { model: BIG, messages: [{ role: 'user', content: 'hi' }] } },
    { body: { messages: [{ role: BIG, content: 'hi' }] } },
    { body: { messages: BIG } },
    { body: { messages: [{ role: 'user', content: 'hi' }] }, headers: { 'x-sluice-budget': HEADER_SIZED } },
  ];
  for (const call of calls)
    await expectNoEcho('POST', '/v1/chat/completions', call, `gateway ${JSON.stringify(call).slice(0, 60)}`);
});

const ACP_METHODS = [
  'session/new',
  'session/load',
  'session/resume',
  'session/prompt',
  'session/permission',
  'session/set_mode',
  'session/set_model',
  'session/set_config_option',
  BIG,
];
/** Methods answered on their session's stream (acp-link.ts). */
const SESSION_ROUTED = new Set([
  'session/prompt',
  'session/set_mode',
  'session/set_model',
  'session/set_config_option',
]);
const ACP_FIELDS = ['sessionId', 'cwd', 'modeId', 'modelId', 'configId', 'value', 'optionId', 'requestId'];

/** POSTs one ACP message on the test's connection; its answer arrives on `streams`. */
async function acpAnswer(body: { id: number }, streams: AcpStream[], label: string) {
  await expectNoEcho('POST', '/acp', { body, headers: { 'acp-connection-id': acpConnection } }, label);
  const answered = (frame: AcpFrame): boolean => frame.message?.id === body.id;
  const found = await vi.waitFor(
    () => {
      const frame = streams.flatMap((stream) => stream.frames).find(answered);
      if (frame === undefined) throw new Error(`${label}: no answer`);
      return frame;
    },
    { timeout: 10_000, interval: 5 },
  );
  return found.message;
}

test('issue 28 item 5: ACP JSON-RPC errors carry no more than 256 characters of a 300 KiB value', async () => {
  // Answers to POSTed requests arrive on the connection's stream, a session's on its own
  // (PROTOCOL §8): open both, on a session this connection created.
  const connection = await openAcpStream(sluice.url, { 'acp-connection-id': acpConnection });
  let id = 1;
  const created = await acpAnswer(
    { jsonrpc: '2.0', id: id++, method: 'session/new', params: { cwd: WORKSPACE, mcpServers: [] } } as never,
    [connection],
    'session/new',
  );
  const acpSession = created.result.sessionId as string;
  const session = await openAcpStream(sluice.url, {
    'acp-connection-id': acpConnection,
    'acp-session-id': acpSession,
  });
  try {
    for (const method of ACP_METHODS)
      for (const field of ACP_FIELDS)
        for (const value of [BIG, `/${BIG}`]) {
          // A session's own methods answer on that session's stream, which a 300 KiB id cannot open.
          if (field === 'sessionId' && SESSION_ROUTED.has(method)) continue;
          const params = {
            sessionId: acpSession,
            cwd: WORKSPACE,
            mcpServers: [],
            prompt: [{ type: 'text', text: 'hi' }],
          };
          const body = { jsonrpc: '2.0', id: id++, method, params: { ...params, [field]: value } };
          const label = `/acp ${method.slice(0, 40)} ${field}`;
          const answer = await acpAnswer(body, [connection, session], label);
          const text = JSON.stringify(answer.error ?? null);
          if (text.includes(ECHO)) echoes.push(`${label} answered ${text.slice(0, 200)}…`);
        }
  } finally {
    connection.close();
    session.close();
  }
  await expectNoEcho('POST', '/acp', { rawBody: BIG }, '/acp raw text');
  await expectNoEcho(
    'POST',
    '/acp',
    { rawBody: `{"jsonrpc":"2.0","id":1,"method":"${BIG}"` },
    '/acp cut JSON',
  );
}, 120_000);
