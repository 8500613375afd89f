import { afterEach, expect, test } from 'vitest';
import { INITIALIZE, connectAcpHttp } from '../helpers/acp-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// ACP's session/set_model (issue 29): every session runs on the catalogue's default model, which
// an ACP client names by its catalogue name; another model is refused.

let server: InProcessDaemon | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

test("session/set_model accepts the catalogue's default model by its name and refuses another", async () => {
  server = await startInProcess({ models: [{ name: 'house', provider: 'echo' }, { name: 'other' }] });
  const { connection } = connectAcpHttp(server.url);
  try {
    await connection.agent.request('initialize', INITIALIZE);
    const { sessionId } = await connection.agent.request('session/new', {
      cwd: server.daemon.config.workspace,
      mcpServers: [],
    });
    await expect(
      connection.agent.request('session/set_model', { sessionId, modelId: 'house' }),
    ).resolves.toEqual({});
    await expect(
      connection.agent.request('session/set_model', { sessionId, modelId: 'other' }),
    ).rejects.toThrow();
  } finally {
    connection.close();
  }
});
