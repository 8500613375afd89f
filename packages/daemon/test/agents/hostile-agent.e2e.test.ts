import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import type { SluiceProcess } from '../helpers/sluice-process.js';
import { openSession, promptAndWait, sendPrompt, terminalOf, textOf } from './acp-helpers.js';
import { memoryMiB } from '../helpers/process-memory.js';
import { startHostileSluice, turnEnd, within } from './hostile-helpers.js';

// Issue 27 items 6–8 against the built daemon: nothing a hostile agent asks or writes blocks the
// daemon or grows its memory past the README's bound, and an agent that goes silent is bounded.

let sluice: SluiceProcess | undefined;
afterEach(async () => {
  await sluice?.stop('SIGKILL');
  sluice = undefined;
});

describe('a hostile agent', () => {
  test('FIFO reads from 8 sessions delay neither a gateway call nor another session’s prompt; SIGTERM exits', async () => {
    const daemon = (sluice = await startHostileSluice());
    const fifo = join(daemon.workspace, 'pipe');
    execFileSync('mkfifo', [fifo]);
    writeFileSync(join(daemon.workspace, 'notes.txt'), 'plain text');
    const base = daemon.url;
    const readers = await Promise.all(Array.from({ length: 8 }, () => openSession(base)));
    const other = await openSession(base);
    const reads = await Promise.all(readers.map((s) => sendPrompt(base, s.sessionId, `read ${fifo}`)));

    const call = api(base, 'POST', '/v1/chat/completions', {
      body: { model: 'echo-1', messages: [{ role: 'user', content: 'still there?' }] },
    });
    const answered = await within(call, 5_000, 'a gateway call');
    expect(answered.status, answered.text).toBe(200);
    const plain = await within(
      promptAndWait(base, other, `read ${join(daemon.workspace, 'notes.txt')}`),
      5_000,
      'another session’s file read',
    );
    expect(plain.text).toBe('read:plain text');

    for (const [i, session] of readers.entries()) {
      const done = await terminalOf(session.stream, reads[i]!, 5_000);
      expect(done.event).toBe('turn_complete');
      expect(textOf(session.stream, reads[i]!)).toMatch(/^error:.*not a regular file/);
    }
    for (const s of [...readers, other]) s.stream.close();
    expect(await within(daemon.stop('SIGTERM'), 15_000, 'the exit after SIGTERM')).toBe(0);
  });

  test('4 agents flooding 128 MiB each keep the daemon’s memory under the README’s worst case', async () => {
    const daemon = (sluice = await startHostileSluice());
    const base = daemon.url;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await api(base, 'POST', '/session', { body: { sessionScope: 'thread' } });
      expect(res.status, res.text).toBe(200);
      ids.push(res.body.sessionId);
    }
    const before = memoryMiB(daemon.child.pid!);
    // 2,000 × 64 KiB agent_message_chunk updates each, relayed to a subscriber that keeps up.
    const ends = await Promise.all(ids.map((id) => turnEnd(base, id)));
    await Promise.all(ids.map((id) => sendPrompt(base, id, 'flood 2000 64')));
    let peak = before.peak;
    const sampler = setInterval(() => (peak = Math.max(peak, memoryMiB(daemon.child.pid!).peak)), 250);
    try {
      const events = await within(Promise.all(ends.map((e) => e.end)), 120_000, 'the floods');
      expect(events).toEqual(['turn_complete', 'turn_complete', 'turn_complete', 'turn_complete']);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, memoryMiB(daemon.child.pid!).peak);
    // docs/operations.md "Memory, worst case", default flags: 256 + 512 + 64 + 10 MiB + the
    // process's ~60 MiB.
    expect(peak, `peak RSS ${Math.round(peak)} MiB (${Math.round(before.peak)} at start)`).toBeLessThan(902);
  }, 150_000);

  test('that never answers initialize fails POST /session within --agent-start-timeout-ms, saying so', async () => {
    const daemon = (sluice = await startHostileSluice(
      ['--agent-start-timeout-ms', '1500'],
      ['--mode=silent'],
    ));
    const res = await within(
      api(daemon.url, 'POST', '/session', { body: { sessionScope: 'thread' } }),
      6_000,
      'POST /session',
    );
    expect(res.status, res.text).toBe(502);
    expect(res.body.code).toBe('agent_unavailable');
    expect(res.body.error).toMatch(/initialize/);
    expect(res.body.agentMessage).toMatch(/initialize within 1500 ms/);
  });
});
