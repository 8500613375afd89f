import { afterEach, expect, test } from 'vitest';
import {
  openSession,
  promptAndWait,
  startAgentDaemon,
  testAgent,
  type AgentDaemon,
} from '../agents/acp-helpers.js';
import { api } from '../helpers/http-client.js';

// An external agent calls the gateway, which serves only its catalogue's names (issue 29): the
// agent process is told the catalogue's default model as OPENAI_MODEL.

let d: AgentDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

test("an external agent is given the catalogue's default model as OPENAI_MODEL", async () => {
  d = await startAgentDaemon((log) => [testAgent('test', log)], {
    models: [{ name: 'house-model', provider: 'echo' }, { name: 'other' }],
  });
  const session = await openSession(d.url);
  expect((await promptAndWait(d.url, session, 'model')).text).toBe('house-model');
  session.stream.close();
});

test("an external agent that offers session/set_model is switched to the session's model", async () => {
  d = await startAgentDaemon((log) => [testAgent('test', log, '--models')], {
    models: [
      { name: 'house-model', provider: 'echo' },
      { name: 'other', aliases: ['second'] },
    ],
  });
  const session = await openSession(d.url, { model: 'second' });
  expect((await api(d.url, 'GET', `/session/${session.sessionId}/status`)).body.model).toBe('other');
  expect((await promptAndWait(d.url, session, 'model')).text).toBe('other');
  const switched = d.log().filter((entry) => entry.method === 'session/set_model');
  expect(switched.map((entry) => entry.params)).toEqual([
    expect.objectContaining({ modelId: 'other', _meta: { 'qwen.session.modelPersistDefault': false } }),
  ]);
  const plain = await openSession(d.url);
  expect((await promptAndWait(d.url, plain, 'model')).text).toBe('house-model');
  expect(d.log().filter((entry) => entry.method === 'session/set_model')).toHaveLength(1);
  session.stream.close();
  plain.stream.close();
});

test('an external agent that offers no model switch refuses another model with model_not_switchable', async () => {
  d = await startAgentDaemon((log) => [testAgent('test', log)], {
    models: [{ name: 'house-model', provider: 'echo', aliases: ['house'] }, { name: 'other' }],
  });
  const refused = await api(d.url, 'POST', '/session', { body: { sessionScope: 'thread', model: 'other' } });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({ code: 'model_not_switchable', model: 'other', agent: 'test' });
  expect(d.daemon.bridge.listSessions()).toEqual([]);
  const session = await openSession(d.url, { model: 'house' });
  expect((await api(d.url, 'GET', `/session/${session.sessionId}/status`)).body.model).toBe('house-model');
  expect((await promptAndWait(d.url, session, 'model')).text).toBe('house-model');
  session.stream.close();
});
