import { afterEach, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import type { SluiceProcess } from '../helpers/sluice-process.js';
import { openSession, promptAndWait, until } from './acp-helpers.js';
import { running, startHostileSluice } from './hostile-helpers.js';

// Issue 27 item 5: an agent's process tree ends with it. The hostile agent starts `sleep 600`
// as a child and a detached grandchild (`setsid`, so it leaves the agent's process group and is
// re-parented to pid 1 once the agent is gone), as qwen runs its shell tools.

let sluice: SluiceProcess | undefined;
afterEach(async () => {
  await sluice?.stop('SIGKILL');
  sluice = undefined;
});

/** Opens a session, has its agent spawn its tree, and returns the agent's pid and the tree's. */
async function agentWithTree(base: string): Promise<{ sessionId: string; pids: number[] }> {
  const session = await openSession(base);
  const { text, done } = await promptAndWait(base, session, 'spawn');
  expect(done.event).toBe('turn_complete');
  const pids = /pids (\d+) (\d+)/.exec(text)!.slice(1).map(Number);
  for (const pid of pids) expect(running(pid), `pid ${pid} runs`).toBe(true);
  session.stream.close();
  return { sessionId: session.sessionId, pids };
}

describe('an agent’s process tree', () => {
  test('ends with its session: after DELETE no child or detached grandchild is left', async () => {
    // A process of its own, so that closing the session stops the agent (a shared process
    // outlives one of its sessions; it ends its tree when it stops, as the other tests show).
    sluice = await startHostileSluice(['--agent-sessions-per-process', '1']);
    const { sessionId, pids } = await agentWithTree(sluice.url);
    const res = await api(sluice.url, 'DELETE', `/session/${sessionId}`);
    expect(res.status).toBeLessThan(300);
    await until(() => pids.every((pid) => !running(pid)), `pids ${pids.join(', ')} are gone`, 10_000);
  });

  test('ends with a crash: what the agent started is stopped when it exits on its own', async () => {
    sluice = await startHostileSluice();
    const session = await openSession(sluice.url);
    const { text, done } = await promptAndWait(sluice.url, session, 'spawn-crash');
    expect(done.event).toBe('turn_error');
    expect(done.data.data.code).toBe('agent_crashed');
    const pids = /pids (\d+) (\d+)/.exec(text)!.slice(1).map(Number);
    await until(() => pids.every((pid) => !running(pid)), `pids ${pids.join(', ')} are gone`, 10_000);
    session.stream.close();
  });

  test('ends with the daemon: after SIGTERM no child or detached grandchild is left', async () => {
    sluice = await startHostileSluice();
    // Two sessions, so two agents and their trees.
    const first = await agentWithTree(sluice.url);
    const second = await agentWithTree(sluice.url);
    const all = [...first.pids, ...second.pids];
    const code = await sluice.stop('SIGTERM');
    expect(code).toBe(0);
    await until(() => all.every((pid) => !running(pid)), `pids ${all.join(', ')} are gone`, 10_000);
  });
});
