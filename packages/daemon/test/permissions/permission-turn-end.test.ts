import { afterEach, describe, expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { PERMISSION_OPTIONS, startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';
import type { Agent, AgentTurn, TurnResult } from '../../src/sessions/agent.js';

let server: InProcessDaemon | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/**
 * An agent that asks, but does not wait for the answer (it gives up on the tool and ends the
 * turn — as an agent racing the request against its own deadline, or failing mid-turn, does).
 */
class ImpatientAgent implements Agent {
  async runTurn(turn: AgentTurn): Promise<TurnResult> {
    void turn.requestPermission?.({
      toolCall: { toolCallId: `call-${turn.promptId}`, title: 'touch file', kind: 'edit' },
      options: [...PERMISSION_OPTIONS],
    });
    turn.emit({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'never mind' } });
    return { stopReason: 'end_turn' };
  }
}

describe('permission requests do not outlive their turn (ADR 008, PROTOCOL §7)', () => {
  test('§7 a request still open when its turn ends is resolved; the session no longer waits for permission', async () => {
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent: new ImpatientAgent() });
    const { sessionId } = (await api(server.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
      .body;
    const events = await openEvents(server.url, sessionId);
    expect(
      (await api(server.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt('go') })).status,
    ).toBe(202);
    await events.waitFor((f) => f.event === 'turn_complete');
    await events.waitFor((f) => f.event === 'permission_resolved', 2000);
    const status = (await api(server.url, 'GET', `/session/${sessionId}/status`)).body;
    expect(status.isWaitingForPermission).toBe(false);
    expect(status.pendingInteractionCount).toBe(0);
    events.close();
  });

  test('§7 turns that ended with an open request do not use up the per-session cap of open requests', async () => {
    server = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent: new ImpatientAgent() });
    const { sessionId } = (await api(server.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
      .body;
    const events = await openEvents(server.url, sessionId);
    const limit = server.daemon.permissions.maxOpenPerSession;
    for (let turn = 0; turn <= limit; turn++) {
      await api(server.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(`turn ${turn}`) });
      const ended = (): number =>
        events.frames.filter((f) => f.event === 'turn_complete' || f.event === 'turn_error').length;
      await events.waitFor(() => ended() > turn);
    }
    // Every turn (the 17th too) must end normally, not with permission_limit_exceeded.
    expect(events.frames.filter((f) => f.event === 'turn_error')).toEqual([]);
    expect(server.daemon.permissions.openCountTotal).toBe(0);
    events.close();
  });
});
