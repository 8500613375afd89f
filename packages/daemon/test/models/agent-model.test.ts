import { afterEach, expect, test } from 'vitest';
import {
  openSession,
  promptAndWait,
  startAgentDaemon,
  testAgent,
  type AgentDaemon,
} from '../agents/acp-helpers.js';

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
