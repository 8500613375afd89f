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

test('an external agent session may name the default model; another is refused with model_not_switchable', async () => {
  d = await startAgentDaemon((log) => [testAgent('test', log)], {
    models: [{ name: 'house-model', provider: 'echo', aliases: ['house'] }, { name: 'other' }],
  });
  const refused = await api(d.url, 'POST', '/session', { body: { sessionScope: 'thread', model: 'other' } });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({
    code: 'model_not_switchable',
    model: 'other',
    agentModel: 'house-model',
  });
  expect(d.daemon.agentPool!.processCount).toBe(0);
  const session = await openSession(d.url, { model: 'house' });
  expect((await api(d.url, 'GET', `/session/${session.sessionId}/status`)).body.model).toBe('house-model');
  expect((await promptAndWait(d.url, session, 'model')).text).toBe('house-model');
  session.stream.close();
});
