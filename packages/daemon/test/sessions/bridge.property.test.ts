import fc from 'fast-check';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  BranchWhilePromptActiveError,
  PromptAbortedError,
  PromptQueueFullError,
  SessionBridge,
  SessionClosedError,
  SessionLimitExceededError,
  SessionNotFoundError,
  type Agent,
  type AgentTurn,
  type PromptAdmission,
  type TurnResult,
} from '../../src/sessions/index.js';
import { FakeClock, RecordingSink, flush, text } from './helpers.js';

type Op =
  | { op: 'prompt'; s: number; deadlineMs: number | undefined; abortable: boolean }
  | { op: 'cancel' | 'close' | 'branch' | 'reopen' | 'succeed' | 'fail' | 'emit'; s: number }
  | { op: 'remove' | 'abortSignal'; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'flush' };

const SESSIONS = 3;
const session = fc.integer({ min: 0, max: SESSIONS - 1 });

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('prompt' as const),
      s: session,
      deadlineMs: fc.option(fc.integer({ min: 1, max: 3_000 }), { nil: undefined }),
      abortable: fc.boolean(),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constantFrom('succeed' as const, 'fail' as const, 'emit' as const),
      s: session,
    }),
  },
  { weight: 6, arbitrary: fc.constant({ op: 'flush' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constantFrom('remove' as const, 'abortSignal' as const), pick: fc.nat() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 2_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constantFrom('cancel' as const, 'branch' as const), s: session }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constantFrom('close' as const, 'reopen' as const), s: session }),
  },
);

const configArb = fc.record({
  limit: fc.constantFrom(0, 1, 2, 3, 4),
  promptDeadlineMs: fc.option(fc.integer({ min: 1, max: 2_500 }), { nil: undefined }),
  terminalEventDelayMs: fc.constantFrom(0, 0, 5),
  onAbort: fc.constantFrom('resolve' as const, 'reject' as const, 'ignore' as const),
  /** Close every session before coming to rest, whatever is queued or running. */
  closeAtEnd: fc.boolean(),
});

interface RunningTurn {
  turn: AgentTurn;
  resolve(result: TurnResult): void;
  reject(error: unknown): void;
  settled: boolean;
}

/** An agent that records the order it is called in and lets the property end its turns. */
class PropertyAgent implements Agent {
  readonly started = new Map<string, string[]>();
  readonly running = new Map<string, RunningTurn[]>();
  readonly violations: string[] = [];

  constructor(
    private readonly onAbort: 'resolve' | 'reject' | 'ignore',
    private readonly hasTerminal: (promptId: string) => boolean,
  ) {}

  runTurn(turn: AgentTurn): Promise<TurnResult> {
    if (this.hasTerminal(turn.promptId)) this.violations.push(`agent started ended prompt ${turn.promptId}`);
    const started = this.started.get(turn.sessionId) ?? [];
    started.push(turn.promptId);
    this.started.set(turn.sessionId, started);
    const running = (this.running.get(turn.sessionId) ?? []).filter((entry) => !entry.settled);
    if (running.length > 0) this.violations.push(`two turns at once on ${turn.sessionId}`);
    return new Promise<TurnResult>((resolve, reject) => {
      const entry: RunningTurn = {
        turn,
        settled: false,
        resolve: (result) => {
          if (entry.settled) return;
          entry.settled = true;
          resolve(result);
        },
        reject: (error) => {
          if (entry.settled) return;
          entry.settled = true;
          reject(error);
        },
      };
      running.push(entry);
      this.running.set(turn.sessionId, running);
      if (this.onAbort !== 'ignore')
        turn.signal.addEventListener('abort', () => {
          if (this.onAbort === 'resolve') entry.resolve({ stopReason: 'cancelled' });
          else entry.reject(turn.signal.reason);
        });
    });
  }

  current(sessionId: string): RunningTurn | undefined {
    return (this.running.get(sessionId) ?? []).find((entry) => !entry.settled);
  }

  anyRunning(): boolean {
    for (const turns of this.running.values()) if (turns.some((entry) => !entry.settled)) return true;
    return false;
  }
}

interface Admitted {
  seq: number;
  sessionId: string;
  admission: PromptAdmission;
  controller: AbortController | undefined;
  settledCount: number;
}

let unhandled = 0;
const onUnhandled = (): void => {
  unhandled++;
};
beforeEach(() => {
  unhandled = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

test('BP-1/3/5/6/7 random interleavings: bounded, released once, FIFO, one terminal event each, zero at rest', async () => {
  await fc.assert(
    fc.asyncProperty(
      configArb,
      fc.array(opArb, { minLength: 1, maxLength: 60, size: 'medium' }),
      async (config, ops) => {
        const clock = new FakeClock(0);
        const sink = new RecordingSink();
        const terminalCount = new Map<string, number>();
        const countTerminals = (): void => {
          terminalCount.clear();
          for (const event of sink.events)
            if (
              (event.type === 'turn_complete' || event.type === 'turn_error') &&
              event.promptId !== undefined
            )
              terminalCount.set(event.promptId, (terminalCount.get(event.promptId) ?? 0) + 1);
        };
        const agent = new PropertyAgent(config.onAbort, (promptId) => {
          countTerminals();
          return (terminalCount.get(promptId) ?? 0) > 0;
        });
        let nextId = 0;
        const bridge = new SessionBridge({
          agent,
          events: sink,
          clock,
          newId: () => `id-${++nextId}`,
          maxPendingPromptsPerSession: config.limit,
          promptDeadlineMs: config.promptDeadlineMs,
          terminalEventDelayMs: config.terminalEventDelayMs,
          maxSessions: 12,
        });
        const limit = config.limit === 0 ? Infinity : config.limit;
        const slots: string[] = [];
        for (let index = 0; index < SESSIONS; index++)
          slots.push(bridge.createSession({ cwd: '/w', scope: 'thread' }).sessionId);
        const allSessions = new Set(slots);
        const admitted: Admitted[] = [];
        const branches: Promise<unknown>[] = [];
        const closing: Array<{ done: boolean }> = [];
        const trackClose = (promise: Promise<void>): { done: boolean } => {
          const state = { done: false };
          void promise.then(() => (state.done = true));
          return state;
        };
        let seq = 0;

        const expectAllowed = (error: unknown, ...allowed: Array<new (...args: never[]) => Error>): void => {
          if (!allowed.some((type) => error instanceof type)) throw error;
        };

        const check = (): void => {
          countTerminals();
          for (const [promptId, count] of terminalCount) {
            expect(count, `terminal events of ${promptId}`).toBe(1);
            expect(admitted.some((entry) => entry.admission.promptId === promptId)).toBe(true);
          }
          for (const sessionId of allSessions) {
            let live: number;
            try {
              live = bridge.pendingPromptCount(sessionId);
            } catch (error) {
              expectAllowed(error, SessionNotFoundError);
              continue;
            }
            const unsettled = admitted.filter(
              (entry) => entry.sessionId === sessionId && !terminalCount.has(entry.admission.promptId),
            ).length;
            expect(live, `pending count of ${sessionId}`).toBe(unsettled);
            expect(live).toBeLessThanOrEqual(limit);
          }
          for (const [sessionId, started] of agent.started) {
            const order = started.map(
              (promptId) => admitted.find((entry) => entry.admission.promptId === promptId)?.seq,
            );
            for (let index = 1; index < order.length; index++)
              expect((order[index] ?? -1) > (order[index - 1] ?? -1), `FIFO order on ${sessionId}`).toBe(
                true,
              );
          }
          expect(agent.violations).toEqual([]);
        };

        for (const op of ops) {
          switch (op.op) {
            case 'prompt': {
              const sessionId = slots[op.s] as string;
              const controller = op.abortable ? new AbortController() : undefined;
              try {
                const admission = bridge.sendPrompt(sessionId, text(`p${seq}`), {
                  ...(op.deadlineMs === undefined ? {} : { deadlineMs: op.deadlineMs }),
                  ...(controller === undefined ? {} : { signal: controller.signal }),
                });
                const entry: Admitted = { seq: seq++, sessionId, admission, controller, settledCount: 0 };
                admitted.push(entry);
                admission.done.then(
                  () => entry.settledCount++,
                  () => entry.settledCount++,
                );
                expect(sink.typesOf(admission.promptId).includes('pending_prompt_added')).toBe(
                  admission.queued,
                );
              } catch (error) {
                expectAllowed(error, PromptQueueFullError, SessionNotFoundError);
                if (error instanceof PromptQueueFullError) expect(error.pendingCount).toBe(limit);
              }
              break;
            }
            case 'succeed':
              agent.current(slots[op.s] as string)?.resolve({
                stopReason: 'end_turn',
                messages: [{ role: 'assistant', content: 'ok' }],
              });
              break;
            case 'fail':
              agent
                .current(slots[op.s] as string)
                ?.reject(Object.assign(new Error('overloaded'), { code: 'model_overloaded' }));
              break;
            case 'emit':
              agent
                .current(slots[op.s] as string)
                ?.turn.emit({ sessionUpdate: 'agent_message_chunk', content: 'x' });
              break;
            case 'cancel':
              try {
                bridge.cancel(slots[op.s] as string);
              } catch (error) {
                expectAllowed(error, SessionNotFoundError);
              }
              break;
            case 'remove':
            case 'abortSignal': {
              const target = admitted[op.pick % Math.max(1, admitted.length)];
              if (target === undefined) break;
              if (op.op === 'abortSignal') target.controller?.abort();
              else
                try {
                  bridge.removePendingPrompt(target.sessionId, target.admission.promptId);
                } catch (error) {
                  expectAllowed(error, SessionNotFoundError);
                }
              break;
            }
            case 'branch':
              try {
                const branch = bridge.branchSession(slots[op.s] as string);
                branches.push(
                  branch.then(
                    (result) => allSessions.add(result.sessionId),
                    (error: unknown) => expectAllowed(error, SessionClosedError, SessionLimitExceededError),
                  ),
                );
              } catch (error) {
                expectAllowed(
                  error,
                  BranchWhilePromptActiveError,
                  SessionLimitExceededError,
                  SessionNotFoundError,
                );
              }
              break;
            case 'close':
              try {
                closing.push(trackClose(bridge.closeSession(slots[op.s] as string)));
              } catch (error) {
                expectAllowed(error, SessionNotFoundError);
              }
              break;
            case 'reopen':
              try {
                bridge.pendingPromptCount(slots[op.s] as string);
              } catch {
                try {
                  const reopened = bridge.createSession({ cwd: '/w', scope: 'thread' }).sessionId;
                  slots[op.s] = reopened;
                  allSessions.add(reopened);
                } catch (error) {
                  expectAllowed(error, SessionLimitExceededError);
                }
              }
              break;
            case 'advance':
              clock.advance(op.ms);
              break;
            case 'flush':
              await flush();
              break;
          }
          check();
        }

        if (config.closeAtEnd) {
          for (const sessionId of allSessions)
            try {
              closing.push(trackClose(bridge.closeSession(sessionId, { reason: 'test_end' })));
            } catch (error) {
              expectAllowed(error, SessionNotFoundError);
            }
          check();
        }

        // Come to rest: end every turn, let every deadline and delay pass.
        for (let round = 0; round < 200; round++) {
          await flush();
          for (const turns of agent.running.values())
            for (const turn of turns) turn.resolve({ stopReason: 'end_turn' });
          clock.advance(5_000);
          await flush();
          if (!agent.anyRunning() && bridge.pendingPromptTotal === 0) break;
        }
        await Promise.all(branches);
        await flush();
        check();

        expect(bridge.pendingPromptTotal).toBe(0);
        for (const entry of admitted) {
          expect(terminalCount.get(entry.admission.promptId), `terminal of prompt #${entry.seq}`).toBe(1);
          expect(entry.settledCount).toBe(1);
          const completedEvents = sink
            .typesOf(entry.admission.promptId)
            .filter((type) => type === 'pending_prompt_completed').length;
          expect(completedEvents).toBe(entry.admission.queued ? 1 : 0);
          const types = sink.typesOf(entry.admission.promptId);
          const terminalAt = Math.max(types.indexOf('turn_complete'), types.indexOf('turn_error'));
          expect(
            types
              .slice(terminalAt + 1)
              .every((type) => type === 'pending_prompt_completed' || type === 'prompt_cancelled'),
            `events after the terminal of prompt #${entry.seq}: ${types.join(',')}`,
          ).toBe(true);
          // A prompt removed from the queue leaves it just before its terminal event (the
          // reference's order); one that ran leaves it after.
          if (entry.admission.queued) {
            const left = types.indexOf('pending_prompt_completed');
            const state = sink
              .ofType('pending_prompt_completed')
              .find((event) => event.promptId === entry.admission.promptId)?.data['state'];
            if (state === 'removed') expect(left).toBe(terminalAt - 1);
            else expect(left).toBeGreaterThan(terminalAt);
          }
        }
        expect(clock.pendingTimers).toBe(0);
        expect(unhandled).toBe(0);
        // Every close finished: no session is stuck closing, and session_closed is its last event.
        expect(closing.every((state) => state.done)).toBe(true);
        for (const sessionId of allSessions) {
          const events = sink.events.filter((event) => event.sessionId === sessionId);
          const closedAt = events.findIndex((event) => event.type === 'session_closed');
          if (closedAt === -1) expect(() => bridge.status(sessionId)).not.toThrow();
          else {
            expect(closedAt).toBe(events.length - 1);
            expect(() => bridge.status(sessionId)).toThrow(SessionNotFoundError);
            expect(() => bridge.pendingPromptCount(sessionId)).toThrow(SessionNotFoundError);
          }
        }
        // Sessions still open accept work again and nothing is stuck in their FIFO.
        for (const sessionId of slots) {
          try {
            const probe = bridge.sendPrompt(sessionId, text('probe'));
            await flush();
            agent.current(sessionId)?.resolve({ stopReason: 'end_turn' });
            await flush();
            clock.advance(config.terminalEventDelayMs);
            await expect(probe.done).resolves.toMatchObject({ stopReason: 'end_turn' });
          } catch (error) {
            expectAllowed(error, SessionNotFoundError, PromptAbortedError);
          }
        }
      },
    ),
    {
      numRuns: Number(process.env.RUNS ?? 150),
      seed: process.env.SEED ? Number(process.env.SEED) : undefined,
      interruptAfterTimeLimit: 20_000,
    },
  );
});
