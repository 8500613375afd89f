import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api, openEvents } from '../helpers/http-client.js';
import { SLUICE_MAIN, runSluice, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import {
  DEFAULT_AGENT_IDLE_TIMEOUT_MS,
  DEFAULT_AGENT_LIVENESS_TIMEOUT_MS,
  DEFAULT_AGENT_MAX_PROCESSES,
  DEFAULT_AGENT_SESSIONS_PER_PROCESS,
  DEFAULT_AGENT_START_TIMEOUT_MS,
  DEFAULT_AGENT_TURN_IDLE_TIMEOUT_MS,
} from '../../src/defaults.js';
import { promptAndWait } from './acp-helpers.js';

// A real agent that needs no install: `sluice serve --agent "node <bundle> acp"` runs its
// sessions on Sluice's own ACP stdio agent (the built-in chat agent with the echo model).

describe('sluice serve --agent with Sluice’s own ACP agent', () => {
  let sluice: SluiceProcess;
  let workspace: string;
  let agentData: string;
  beforeAll(async () => {
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-agent-ws-')));
    agentData = mkdtempSync(join(tmpdir(), 'sluice-agent-data-'));
    sluice = await startSluice([
      '--workspace',
      workspace,
      '--agent',
      `sluice="${process.execPath}" "${SLUICE_MAIN}" acp --data-dir "${agentData}"`,
      // one agent process holds its data directory: its sessions share it
      '--agent-sessions-per-process',
      '4',
    ]);
  });
  afterAll(async () => {
    await sluice?.stop();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(agentData, { recursive: true, force: true });
  });

  test('two sessions get their answers from the agent process', async () => {
    const sessions = [];
    for (let i = 0; i < 2; i++) {
      const res = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
      expect(res.status, res.text).toBe(200);
      sessions.push({
        sessionId: res.body.sessionId as string,
        stream: await openEvents(sluice.url, res.body.sessionId),
      });
    }
    const [a, b] = sessions;
    const first = await promptAndWait(sluice.url, a!, 'hello through two daemons');
    expect(first.done.event).toBe('turn_complete');
    expect(first.text).toContain('hello through two daemons');
    const second = await promptAndWait(sluice.url, b!, 'and another');
    expect(second.text).toContain('and another');
    for (const s of sessions) s.stream.close();
  });

  test('a missing agent binary refuses the create with 502 agent_unavailable', async () => {
    const other = await startSluice(['--workspace', workspace, '--agent', 'sluice-no-such-agent --acp']);
    try {
      const res = await api(other.url, 'POST', '/session', {});
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('agent_unavailable');
    } finally {
      await other.stop();
    }
  });

  test('serve --help documents the agent flags and their defaults', async () => {
    const help = (await runSluice(['serve', '--help'])).stdout.replace(/\s+/g, ' ');
    const expected: Array<[string, number]> = [
      ['--agent-sessions-per-process <n>', DEFAULT_AGENT_SESSIONS_PER_PROCESS],
      ['--agent-max-processes <n>', DEFAULT_AGENT_MAX_PROCESSES],
      ['--agent-idle-timeout-ms <ms>', DEFAULT_AGENT_IDLE_TIMEOUT_MS],
      ['--agent-liveness-timeout-ms <ms>', DEFAULT_AGENT_LIVENESS_TIMEOUT_MS],
      ['--agent-start-timeout-ms <ms>', DEFAULT_AGENT_START_TIMEOUT_MS],
      ['--agent-turn-idle-timeout-ms <ms>', DEFAULT_AGENT_TURN_IDLE_TIMEOUT_MS],
    ];
    expect(help).toContain('--agent <command>');
    for (const [flag, value] of expected)
      expect(help.slice(help.indexOf(flag)).split(' --')[0], flag).toContain(`(default: ${value})`);
  });

  test('a bad --agent value refuses to start, naming the flag', async () => {
    const { code, stderr } = await runSluice(['serve', '--port', '0', '--agent', 'qwen="unterminated']);
    expect(code).toBe(1);
    expect(stderr).toContain('--agent');
    expect(stderr).toContain('unterminated');
  });
});
