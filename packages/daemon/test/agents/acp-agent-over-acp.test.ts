import type { RequestError } from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, test } from 'vitest';
import { INITIALIZE, connectAcpHttp } from '../helpers/acp-client.js';
import { startAgentDaemon, testAgent, type AgentDaemon } from './acp-helpers.js';

// An ACP client of the daemon (/acp) whose sessions run on an external ACP agent: the agent's
// answers reach it, and an agent that cannot run sessions refuses its session/new (issue 18 §1).

let d: AgentDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

describe('ACP clients of sessions on an external agent', () => {
  test('session/new opens the session in the agent and session/prompt gets its answer', async () => {
    d = await startAgentDaemon((log) => [testAgent('test', log)]);
    const { connection, log } = connectAcpHttp(d.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const { sessionId } = await connection.agent.request('session/new', {
        cwd: d.workspace,
        mcpServers: [],
      });
      expect(d.log().some((e) => e.method === 'session/new')).toBe(true);
      const answer = await connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'say over acp' }],
      });
      expect(answer).toEqual({ stopReason: 'end_turn' });
      const texts = log.updates
        .filter((u) => u.update.sessionUpdate === 'agent_message_chunk')
        .map((u) => (u.update as { content: { text: string } }).content.text);
      expect(texts.join('')).toBe('over acp ');
    } finally {
      connection.close();
    }
  });

  test('session/new of an agent that is not installed fails with errorKind agent_unavailable', async () => {
    d = await startAgentDaemon(() => [{ name: 'missing', command: ['sluice-no-such-agent-binary'] }]);
    const { connection } = connectAcpHttp(d.url);
    try {
      await connection.agent.request('initialize', INITIALIZE);
      const error = (await connection.agent.request('session/new', { cwd: d.workspace, mcpServers: [] }).then(
        () => undefined,
        (e: unknown) => e,
      )) as RequestError;
      expect(error.data).toMatchObject({ errorKind: 'agent_unavailable', httpStatus: 502, agent: 'missing' });
      expect(error.message).toContain('command not found');
    } finally {
      connection.close();
    }
  });
});
