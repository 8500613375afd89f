import fc from 'fast-check';
import { expect, test } from 'vitest';
import { api, textPrompt, type EventStream } from '../helpers/http-client.js';
import { isTerminal, openSession, startAgentDaemon, testAgent, until } from './acp-helpers.js';

// The pool's invariants under random interleavings of session opens, prompts (that answer,
// wait or crash their process), cancels, kills from outside, idle retirement and closes
// (issue 18 §1, docs/decisions/015): every admitted prompt ends exactly once, the processes
// never exceed --agent-max-processes, and no agent process outlives the daemon.

type Op =
  | { op: 'open' }
  | { op: 'prompt'; s: number; command: 'say ok' | 'wait' | 'crash' }
  | { op: 'cancel' | 'close'; s: number }
  | { op: 'kill'; pick: number }
  | { op: 'pause' };

const MAX_PROCESSES = 2;
const pick = fc.integer({ min: 0, max: 3 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ op: 'open' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('prompt' as const),
      s: pick,
      command: fc.constantFrom('say ok' as const, 'wait' as const, 'crash' as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('cancel' as const, 'close' as const), s: pick }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('kill' as const), pick }) },
  { weight: 1, arbitrary: fc.constant({ op: 'pause' as const }) },
);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('every prompt ends exactly once, processes stay within the limit, none outlive the daemon', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 3, maxLength: 9 }), async (ops) => {
      const d = await startAgentDaemon(() => [testAgent('test')], {
        agentMaxProcesses: MAX_PROCESSES,
        agentIdleTimeoutMs: 150,
      });
      const pool = d.daemon.agentPool!;
      const sessions: Array<{ sessionId: string; stream: EventStream; closed: boolean }> = [];
      const prompts: Array<{ stream: EventStream; promptId: string }> = [];
      const pids = new Set<number>();
      const observe = (): void => {
        for (const pid of pool.pids()) pids.add(pid);
        expect(pool.processCount).toBeLessThanOrEqual(MAX_PROCESSES);
      };
      try {
        for (const op of ops) {
          const s = 's' in op ? sessions[op.s % Math.max(1, sessions.length)] : undefined;
          if (op.op === 'open') {
            const res = await api(d.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
            expect([200, 503]).toContain(res.status);
            if (res.status === 200)
              sessions.push({
                ...(await openSession(d.url, { sessionId: res.body.sessionId })),
                closed: false,
              });
          } else if (op.op === 'prompt' && s !== undefined && !s.closed) {
            const res = await api(d.url, 'POST', `/session/${s.sessionId}/prompt`, {
              body: textPrompt(op.command),
            });
            expect([202, 503]).toContain(res.status);
            if (res.status === 202) prompts.push({ stream: s.stream, promptId: res.body.promptId });
          } else if (op.op === 'cancel' && s !== undefined && !s.closed) {
            await api(d.url, 'POST', `/session/${s.sessionId}/cancel`);
          } else if (op.op === 'close' && s !== undefined && !s.closed) {
            s.closed = true;
            await api(d.url, 'DELETE', `/session/${s.sessionId}`);
          } else if (op.op === 'kill') {
            const victims = pool.pids();
            if (victims.length > 0) process.kill(victims[op.pick % victims.length]!, 'SIGKILL');
          } else if (op.op === 'pause') {
            await new Promise((r) => setTimeout(r, 200)); // lets idle processes be retired
          }
          observe();
        }
        // closing ends every pending prompt; session_closed follows its sessions' last terminal event
        for (const s of sessions) if (!s.closed) await api(d.url, 'DELETE', `/session/${s.sessionId}`);
        for (const s of sessions) await s.stream.waitFor((f) => f.event === 'session_closed');
        observe();
      } finally {
        await d.stop();
      }
      for (const { stream, promptId } of prompts)
        expect(stream.frames.filter((f) => isTerminal(f) && f.data.promptId === promptId)).toHaveLength(1);
      for (const s of sessions) s.stream.close();
      await until(() => [...pids].every((pid) => !alive(pid)), 'every agent process ended');
    }),
    { numRuns: 5 },
  );
}, 120_000);
