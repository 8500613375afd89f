import OpenAI from 'openai';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// `npm start` offline: the bundled CLI with the built-in echo model answers the model gateway.

let sluice: SluiceProcess;
let client: OpenAI;
beforeAll(async () => {
  sluice = await startSluice(['--token', 'tok-e2e']);
  client = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: 'tok-e2e', maxRetries: 0 });
});
afterAll(async () => {
  await sluice?.stop();
});

test('the echo model answers /v1/chat/completions, whole and streamed, content parts included', async () => {
  const completion = await client.chat.completions.create({
    model: 'echo-1',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello gateway' }] }],
  });
  expect(completion.choices[0]?.message.content).toBe('Echo: hello gateway');
  expect(completion.choices[0]?.finish_reason).toBe('stop');
  expect(completion.usage?.completion_tokens).toBe(3);

  const stream = await client.chat.completions.create({
    model: 'echo-1',
    messages: [{ role: 'user', content: 'a streamed echo answer' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    usage = chunk.usage ?? usage;
  }
  expect(text).toBe('Echo: a streamed echo answer');
  expect(usage).toMatchObject({ completion_tokens: 5 });
  expect((await client.models.list()).data.map((m) => m.id)).toEqual(['echo-1']);
});

test('without the daemon token the gateway answers 401', async () => {
  const anonymous = new OpenAI({ baseURL: `${sluice.url}/v1`, apiKey: 'not-the-token', maxRetries: 0 });
  await expect(anonymous.models.list()).rejects.toMatchObject({ status: 401 });
});
