import { FakeClock } from '@sluice/runtime/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { TurnWatchdog } from '../../src/agents/acp/turn-watchdog.js';
import { openSession, sendPrompt, startAgentDaemon, terminalOf, type AgentDaemon } from './acp-helpers.js';
import { HOSTILE_AGENT } from './hostile-helpers.js';

// Issue 27 item 8: a turn with neither agent output nor a model call for
// --agent-turn-idle-timeout-ms ends agent_unresponsive, though its agent answers liveness probes.

let daemon: AgentDaemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

describe('a turn that goes idle', () => {
  // The idle turn is cancelled (session/cancel); this agent ignores it, so it ends once the
  // cancel grace (10 s) has passed too and the process is stopped.
  test('ends turn_error agent_unresponsive after --agent-turn-idle-timeout-ms; the session answers again', async () => {
    daemon = await startAgentDaemon(() => [{ name: 'hostile', command: [process.execPath, HOSTILE_AGENT] }], {
      agentTurnIdleTimeoutMs: 800,
      agentLivenessTimeoutMs: 300,
    });
    const session = await openSession(daemon.url);
    const idle = await sendPrompt(daemon.url, session.sessionId, 'idle');
    const failed = await terminalOf(session.stream, idle, 20_000);
    expect(failed.event).toBe('turn_error');
    expect(failed.data.data.code).toBe('agent_unresponsive');
    const next = await sendPrompt(daemon.url, session.sessionId, 'hello');
    expect((await terminalOf(session.stream, next, 10_000)).event).toBe('turn_complete');
    session.stream.close();
  }, 40_000);
});

describe('TurnWatchdog', () => {
  const watch = (busy: () => boolean = () => false) => {
    const clock = new FakeClock();
    let fired = 0;
    const dog = new TurnWatchdog(clock, 1_000, busy, () => fired++);
    return { clock, dog, fired: () => fired };
  };

  test('fires once the bound passes with no output', () => {
    const { clock, fired } = watch();
    clock.advance(999);
    expect(fired()).toBe(0);
    clock.advance(1);
    expect(fired()).toBe(1);
    clock.advance(5_000);
    expect(fired()).toBe(1);
  });

  test('output restarts the bound; a running model call holds it', () => {
    let busy = true;
    const { clock, dog, fired } = watch(() => busy);
    clock.advance(900);
    dog.touch();
    clock.advance(900);
    expect(fired()).toBe(0);
    clock.advance(3_000);
    expect(fired()).toBe(0);
    busy = false;
    clock.advance(1_000);
    expect(fired()).toBe(1);
  });

  test('a permission question pauses it; stop ends it; 0 never fires', () => {
    const { clock, dog, fired } = watch();
    const resume = dog.pause();
    clock.advance(10_000);
    expect(fired()).toBe(0);
    resume();
    dog.stop();
    clock.advance(10_000);
    expect(fired()).toBe(0);
    const never = new TurnWatchdog(
      clock,
      0,
      () => false,
      () => expect.fail('fired'),
    );
    clock.advance(1_000_000);
    never.stop();
  });
});
