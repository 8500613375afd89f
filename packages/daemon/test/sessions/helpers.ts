import { FakeClock } from '@sluice/runtime/testing';
import {
  SessionBridge,
  TERMINAL_EVENT_TYPES,
  promptText,
  type Agent,
  type AgentTurn,
  type ContentBlock,
  type SessionBridgeOptions,
  type SessionEvent,
  type SessionEventSink,
  type SessionRecord,
  type SessionStore,
  type TurnResult,
} from '../../src/sessions/index.js';

export { FakeClock };

/** A published event together with the session it was published on. */
export type RecordedEvent = SessionEvent & { sessionId: string };

/** A sink that keeps every event, for assertions on what clients would see. */
export class RecordingSink implements SessionEventSink {
  readonly events: RecordedEvent[] = [];

  publish(sessionId: string, event: SessionEvent): void {
    this.events.push({ sessionId, ...event });
  }

  /** Event types of one prompt, in order. */
  typesOf(promptId: string): string[] {
    return this.events.filter((event) => event.promptId === promptId).map((event) => event.type);
  }

  ofType(type: string, sessionId?: string): RecordedEvent[] {
    return this.events.filter(
      (event) => event.type === type && (sessionId === undefined || event.sessionId === sessionId),
    );
  }

  terminalsOf(promptId: string): RecordedEvent[] {
    return this.events.filter((event) => event.promptId === promptId && TERMINAL_EVENT_TYPES.has(event.type));
  }

  clear(): void {
    this.events.length = 0;
  }
}

/** Lets every pending promise callback run. */
export async function flush(): Promise<void> {
  for (let round = 0; round < 5; round++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A one-block text prompt. */
export function text(value: string): ContentBlock[] {
  return [{ type: 'text', text: value }];
}

/** One turn a {@link ControlledAgent} received; the test decides how it ends. */
export class ControlledTurn {
  settled = false;

  constructor(
    readonly turn: AgentTurn,
    private readonly resolveTurn: (result: TurnResult) => void,
    private readonly rejectTurn: (error: unknown) => void,
  ) {}

  get promptId(): string {
    return this.turn.promptId;
  }

  get text(): string {
    return promptText(this.turn.prompt);
  }

  /** Streams one agent chunk. */
  chunk(value: string): void {
    this.turn.emit({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: value } });
  }

  /** Ends the turn with an assistant answer. */
  succeed(answer = `re: ${this.text}`, stopReason = 'end_turn'): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveTurn({ stopReason, messages: [{ role: 'assistant', content: answer }] });
  }

  /** Ends the turn by throwing `error`. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.rejectTurn(error);
  }
}

/**
 * An agent whose turns end when the test says so. On abort it resolves `cancelled`
 * (`onAbort: 'resolve'`), throws the abort reason (`'reject'`) or keeps running (`'ignore'`).
 */
export class ControlledAgent implements Agent {
  readonly turns: ControlledTurn[] = [];
  onAbort: 'resolve' | 'reject' | 'ignore' = 'resolve';

  runTurn(turn: AgentTurn): Promise<TurnResult> {
    return new Promise<TurnResult>((resolve, reject) => {
      const controlled = new ControlledTurn(turn, resolve, reject);
      this.turns.push(controlled);
      const mode = this.onAbort;
      if (mode === 'ignore') return;
      turn.signal.addEventListener(
        'abort',
        () => {
          if (mode === 'resolve') controlled.succeed('(cancelled)', 'cancelled');
          else controlled.fail(turn.signal.reason);
        },
        { once: true },
      );
    });
  }

  /** The turns not yet ended. */
  get running(): ControlledTurn[] {
    return this.turns.filter((turn) => !turn.settled);
  }

  /** The only unended turn of `sessionId`; throws when there is none or more than one. */
  current(sessionId: string): ControlledTurn {
    const running = this.running.filter((turn) => turn.turn.sessionId === sessionId);
    if (running.length !== 1 || running[0] === undefined)
      throw new Error(`expected one running turn on ${sessionId}, found ${running.length}`);
    return running[0];
  }
}

/** An agent that echoes the prompt after `delayMs` on the fake clock and honours abort. */
export class EchoAgent implements Agent {
  constructor(
    private readonly clock: FakeClock,
    private readonly delayMs: number,
  ) {}

  runTurn(turn: AgentTurn): Promise<TurnResult> {
    return new Promise<TurnResult>((resolve) => {
      const answer = promptText(turn.prompt);
      const onAbort = (): void => {
        this.clock.clearTimer(timer);
        resolve({ stopReason: 'cancelled' });
      };
      const timer = this.clock.setTimer(() => {
        turn.signal.removeEventListener('abort', onAbort);
        turn.emit({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: answer } });
        resolve({ stopReason: 'end_turn', messages: [{ role: 'assistant', content: answer }] });
      }, this.delayMs);
      turn.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** An agent whose every turn fails with `error`. */
export class FailingAgent implements Agent {
  constructor(private readonly error: unknown) {}

  async runTurn(): Promise<TurnResult> {
    throw this.error;
  }
}

/** A store whose saves wait until the test releases them (or fail when told to). */
export class GatedStore implements SessionStore {
  readonly saved: SessionRecord[] = [];
  private readonly waiting: Array<() => void> = [];
  failNext = false;

  get pending(): number {
    return this.waiting.length;
  }

  save(record: SessionRecord): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error('disk full'));
    }
    return new Promise<void>((resolve) => {
      this.waiting.push(() => {
        this.saved.push(structuredClone(record));
        resolve();
      });
    });
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    for (let index = this.saved.length - 1; index >= 0; index--)
      if (this.saved[index]?.sessionId === sessionId) return structuredClone(this.saved[index]);
    return undefined;
  }

  /** Completes every save issued so far. */
  releaseAll(): void {
    for (const release of this.waiting.splice(0)) release();
  }

  /** Completes saves, including the ones they lead to, until none is waiting. */
  async drain(): Promise<void> {
    for (;;) {
      await flush();
      if (this.waiting.length === 0) return;
      this.releaseAll();
    }
  }
}

export const EPOCH = 1_700_000_000_000;

/** A bridge on a fake clock with deterministic ids (`id-1`, `id-2`, …) and a recording sink. */
export function setup(options: Partial<SessionBridgeOptions> & { agent?: Agent } = {}): {
  bridge: SessionBridge;
  clock: FakeClock;
  sink: RecordingSink;
  agent: ControlledAgent;
} {
  const clock = (options.clock as FakeClock | undefined) ?? new FakeClock(0);
  const sink = new RecordingSink();
  const agent = new ControlledAgent();
  let next = 0;
  const bridge = new SessionBridge({
    agent,
    events: sink,
    clock,
    wallClock: () => EPOCH + clock.now(),
    newId: () => `id-${++next}`,
    ...options,
  });
  return { bridge, clock, sink, agent };
}

/** Opens a thread session in `/work` and returns its id. */
export function openSession(bridge: SessionBridge, clientId?: string): string {
  return bridge.createSession({
    cwd: '/work',
    scope: 'thread',
    ...(clientId === undefined ? {} : { clientId }),
  }).sessionId;
}
