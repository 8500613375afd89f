import { OpenAIProvider } from '@sluice/runtime/openai';
import { afterEach, expect, test } from 'vitest';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { operatorLog } from '../../src/cli/serve.js';
import type { LazyLogger } from '../../src/cli/lazy-logger.js';
import { DaemonClient, isDaemonTurnError } from '../../../sdk/src/index.js';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 19 item 13: an upstream failure reaches the prompt's client as something a person can
// act on — the upstream's own message and what to check, its Retry-After — and the operator's
// `turn failed` line carries the same message.

let upstream: FakeOpenAIServer | undefined;
let sluice: InProcessDaemon | undefined;
afterEach(async () => {
  await sluice?.stop();
  await upstream?.close();
});

async function failedTurn(reply: Parameters<FakeOpenAIServer['reply']>[0]) {
  upstream = await startFakeOpenAIServer({ reply });
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }),
    error: () => {},
    info: () => {},
    debug: () => {},
  } as unknown as LazyLogger;
  const provider = new OpenAIProvider({ model: 'm', baseURL: upstream.baseURL, apiKey: 'sk-wrong' });
  sluice = await startInProcess({}, { provider, onTurnError: operatorLog(logger).onTurnError! });
  const { sessionId } = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
    .body;
  const events = await openEvents(sluice.url, sessionId);
  await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('hello') });
  const error = await events.waitFor((f) => f.event === 'turn_error', 10_000);
  events.close();
  return { data: error.data.data as Record<string, unknown>, lines };
}

test('a 401 says what the upstream said and which key to check, to the client and in the log', async () => {
  const { data, lines } = await failedTurn({
    status: 401,
    error: {
      message: 'Incorrect API key provided: sk-wr***ng.',
      type: 'invalid_request_error',
      code: 'invalid_api_key',
    },
  });
  expect(data['code']).toBe('model_provider_error');
  expect(data['retryable']).toBe(false);
  expect(data['message']).toMatch(
    /answered HTTP 401 \(invalid_api_key\): Incorrect API key provided: sk-wr\*\*\*ng\. — check OPENAI_API_KEY/,
  );
  expect(lines).toContainEqual({
    fields: expect.objectContaining({ code: 'model_provider_error', message: data['message'] }),
    message: 'turn failed',
  });
});

test('a 429 carries the upstream Retry-After to the client', async () => {
  const { data } = await failedTurn({
    status: 429,
    error: { message: 'Rate limit reached' },
    headers: { 'retry-after': '7' },
  });
  expect(data['retryAfterMs']).toBe(7000);
  expect(data['retryable']).toBe(true);
  expect(data['message']).toMatch(/Rate limit reached — the provider asks to retry after 7 s/);
});

test('issue 19 item 10: our SDK reports a retryable turn failure as retryable, with its delay', async () => {
  upstream = await startFakeOpenAIServer({
    reply: { status: 429, error: { message: 'Rate limit reached' }, headers: { 'retry-after': '7' } },
  });
  const provider = new OpenAIProvider({ model: 'm', baseURL: upstream.baseURL, apiKey: 'sk-test' });
  sluice = await startInProcess({}, { provider });
  const client = new DaemonClient({ baseUrl: sluice.url });
  const { sessionId } = await client.createOrAttachSession({ sessionScope: 'thread' });
  const error = await client.prompt(sessionId, { prompt: [{ type: 'text', text: 'hello' }] }).catch((e) => e);
  expect(isDaemonTurnError(error)).toBe(true);
  expect(error).toMatchObject({ retryable: true, retryAfterMs: 7000, code: 'model_provider_error' });
});
