import { afterEach, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';
import type { AgentTurn } from '../../src/sessions/index.js';

// Issue 19 item 3: 30 prompts of 9.5 MiB took the daemon from 64 MB to 759 MB, because the
// replay windows were bounded by event count only. With byte budgets, what the windows hold
// stays within them whatever the prompts weigh, and a replay from an evicted id says so. This file
// checks the budgets' own accounting; event-memory-budget.e2e.test.ts measures the process's memory.

let sluice: InProcessDaemon | undefined;
afterEach(async () => {
  await sluice?.stop();
});

test('large prompts in several sessions keep every replay window within its byte budgets', async () => {
  const MiB = 1024 * 1024;
  // An agent that answers with one short chunk: the prompts' own events carry the weight.
  const agent = {
    runTurn: async (turn: AgentTurn) => {
      turn.emit({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'ok' } });
      return { stopReason: 'end_turn' as const };
    },
  };
  sluice = await startInProcess({ eventRingBytes: 6 * MiB, eventMemoryBytes: 10 * MiB }, { agent });
  const { streams } = sluice.daemon.bridge;
  const sessions: string[] = [];
  for (let i = 0; i < 3; i++)
    sessions.push(
      (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body.sessionId,
    );
  const big = 'y'.repeat(MiB);
  for (const sessionId of sessions) {
    const events = await openEvents(sluice.url, sessionId);
    for (let n = 0; n < 3; n++) {
      const { body } = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
        body: textPrompt(big),
      });
      await events.waitFor((f) => f.event === 'turn_complete' && f.data.promptId === body.promptId, 20_000);
      expect(streams.memory.bytes).toBeLessThanOrEqual(10 * MiB);
      expect(streams.busFor(sessionId).retainedBytes).toBeLessThanOrEqual(6 * MiB);
    }
    events.close();
  }
  const replay = await openEvents(sluice.url, sessions[0]!, { headers: { 'Last-Event-ID': '0' } });
  const resync = await replay.waitFor((f) => f.event === 'state_resync_required');
  expect(resync.data.data.reason).toBe('ring_evicted');
  replay.close();
});
