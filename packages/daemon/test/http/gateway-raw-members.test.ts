import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OpenAIProvider } from '@sluice/runtime/openai';
import type { ModelRequestRecord } from '@sluice/runtime';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// docs/decisions/042: an agent's large members (`tools`) travel as the bytes it sent — to the
// upstream and into the journal — and mean exactly what they meant when read into objects.

let upstream: FakeOpenAIServer;
let sluice: InProcessDaemon;
const TOKEN = 'raw-members-token';

beforeAll(async () => {
  upstream = await startFakeOpenAIServer();
  const provider = new OpenAIProvider({ baseURL: upstream.baseURL, apiKey: 'up-key', model: 'up-model' });
  sluice = await startInProcess({}, { provider }, { token: TOKEN });
});
afterAll(async () => {
  await sluice?.stop();
  await upstream?.close();
});

/** Tool schemas of ~2 KiB as another encoder writes them: spaces, `\u` escapes, text outside ASCII. */
const TOOLS_TEXT = `[ { "type" : "function", "function" : { "name" : "read_file",
  "description" : "Reads a file \\u2014 caf\\u00e9, naïve, 日本. ${'Numbered lines. '.repeat(120)}",
  "parameters" : { "type" : "object", "properties" : { "path" : { "type" : "string" } } } } } ]`;

/** Posts a chat body `text` as a session's agent would, with a credential of session `sessionId`. */
async function post(sessionId: string, text: string): Promise<Response> {
  const credential = sluice.daemon.credentials.issue(sessionId);
  return fetch(`${sluice.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body: text,
  });
}

const body = (tools: string, content = 'hi'): string =>
  `{"model":"up-model","messages":[{"role":"user","content":"${content}"}],"tools":${tools},"stream":true}`;

describe("an agent's tool schemas", () => {
  test('reach the upstream as the bytes the agent sent, and the journal as their value', async () => {
    upstream.reply({ text: 'done' });
    const res = await post('sess-raw', body(TOOLS_TEXT));
    expect(res.status).toBe(200);
    await res.text();
    const sent = upstream.requests.at(-1)!;
    expect(sent.raw).toContain(`"tools":${TOOLS_TEXT}`);
    expect(sent.body['tools']).toEqual(JSON.parse(TOOLS_TEXT));
    const records = await sluice.daemon.journal.recordsForSession!('sess-raw');
    const request = records.find((r) => r.type === 'model_request') as ModelRequestRecord;
    expect(JSON.parse(JSON.stringify(request.request.extra?.['tools']))).toEqual(JSON.parse(TOOLS_TEXT));
  });

  test('holding a forbidden key reach the upstream without it, as every body is read', async () => {
    upstream.reply({ text: 'done' });
    const tools = TOOLS_TEXT.replace('"type" : "object"', '"type" : "object", "__proto__" : { "x" : 1 }');
    const res = await post('sess-proto', body(tools));
    expect(res.status).toBe(200);
    await res.text();
    const sent = upstream.requests.at(-1)!;
    expect(sent.raw).not.toContain('__proto__');
    expect(sent.body['tools']).toEqual(JSON.parse(TOOLS_TEXT));
  });

  test('of under 1 KiB are read and sent as before', async () => {
    upstream.reply({ text: 'done' });
    const small = '[ { "type" : "function", "function" : { "name" : "ls" } } ]';
    const res = await post('sess-small', body(small));
    expect(res.status).toBe(200);
    await res.text();
    expect(upstream.requests.at(-1)!.raw).toContain('"tools":[{"type":"function","function":{"name":"ls"}}]');
  });
});
