import { afterEach, describe, expect, test } from 'vitest';
import { SECRET_VARIABLES } from '../../src/settings/index.js';
import { openSession, promptAndWait, startAgentDaemon, testAgent, type AgentDaemon } from './acp-helpers.js';

// An agent runs the model's tool calls (qwen runs shell commands): what its process can read, a
// prompt can make it print. The daemon's own credentials are not in its environment.

const SET = {
  SLUICE_TOKEN: 'daemon-token-secret',
  QWEN_SERVER_TOKEN: 'reference-token-secret',
  SLUICE_STORE: 'postgres://sluice:pw-secret@db/sluice',
  SLUICE_FLEET_REDIS: 'redis://:pw-secret@cache:6379',
  SLUICE_LOG_LEVEL: 'warn',
};
let d: AgentDaemon | undefined;
const saved = Object.fromEntries(Object.keys(SET).map((name) => [name, process.env[name]]));
afterEach(async () => {
  await d?.stop();
  d = undefined;
  for (const [name, value] of Object.entries(saved))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});

describe("an agent process's environment", () => {
  test("holds none of the daemon's secrets (token, fleet URLs), but the daemon's other variables", async () => {
    Object.assign(process.env, SET);
    d = await startAgentDaemon((log) => [testAgent('test', log)]);
    const session = await openSession(d.url);
    const { text } = await promptAndWait(d.url, session, `env ${Object.keys(SET).join(' ')}`);
    expect(text).toBe('- - - - warn');
    session.stream.close();
  });

  test('the secret variables are derived from the settings marked secret', () => {
    expect([...SECRET_VARIABLES].sort()).toEqual(
      ['QWEN_SERVER_TOKEN', 'SLUICE_FLEET_REDIS', 'SLUICE_STORE', 'SLUICE_TOKEN'].sort(),
    );
  });
});
