import { describe, expect, test, vi } from 'vitest';
import { ProviderError } from '../../src/errors.js';
import { FakeClock } from '../../src/testing/index.js';
import type {
  GenerationRequest,
  ModelProvider,
  ModelStreamEvent,
  ProviderCallOptions,
  ToolCall,
  Usage,
} from '../../src/types.js';

/**
 * The cases of the provider contract. A provider runs those that apply to it: the echo model has
 * no upstream (no HTTP errors, no connection to refuse, no timer of its own: the runtime's
 * deadline reaches it as the abort that `cancel` covers) and never calls a tool.
 */
export type ContractCase =
  | 'complete'
  | 'stream'
  | 'tool-history'
  | 'tool-calls'
  | 'upstream-errors'
  | 'connection-refused'
  | 'cancel'
  | 'deadline';

export const ALL_CASES: readonly ContractCase[] = [
  'complete',
  'stream',
  'tool-history',
  'tool-calls',
  'upstream-errors',
  'connection-refused',
  'cancel',
  'deadline',
];

/** What the model is scripted to answer, and what the provider must report. */
export interface ScriptedAnswer {
  text: string;
  usage: Usage;
  toolCalls?: ToolCall[];
}

/** An upstream's HTTP error answer. */
export interface ScriptedFailure {
  status: number;
  message: string;
  retryAfter?: string;
}

/** One provider under the contract, with its upstream (a real server on loopback speaking its wire). */
export interface ProviderSubject {
  /** The provider against the upstream as scripted; `clock` runs its own timers. */
  create(clock: FakeClock): ModelProvider;
  /** Scripts the next answer to `request`; returns what the provider must report. */
  answer(script: ScriptedAnswer, request: GenerationRequest): ScriptedAnswer;
  /** Scripts the next streamed answer to stop after its first text delta and wait. */
  stall(): void;
  /** Scripts the next answer never to come (no response head). */
  hang?(): void;
  /** Scripts the next answer to be an HTTP error. */
  fail?(failure: ScriptedFailure): void;
  /** A provider pointed at a loopback port nobody listens on. */
  refused?(): ModelProvider;
  /** Responses the upstream still has open (a cancelled call must close its own). */
  openResponses?(): number;
  readonly cases: readonly ContractCase[];
}

const PROMPT = 'Say hello to the contract suite please';

const plain: GenerationRequest = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: PROMPT },
  ],
};

/** A conversation that already ran one tool: tools offered, a tool call and its result in history. */
const withTools: GenerationRequest = {
  messages: [
    { role: 'system', content: 'Use the tools.' },
    { role: 'user', content: 'What is the weather in Oslo?' },
    {
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'call_prev', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
    },
    { role: 'tool', toolCallId: 'call_prev', content: '{"celsius":3}' },
    { role: 'user', content: PROMPT },
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } },
  ],
};

const TOOL_CALLS: ToolCall[] = [
  { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { id: 'call_b', name: 'get_time', arguments: '{"tz":"UTC"}' },
];

function options(overrides: Partial<ProviderCallOptions> = {}): ProviderCallOptions {
  return { signal: new AbortController().signal, timeoutMs: 30_000, ...overrides };
}

/** The stream's typed events, `raw` ones and `native` payloads left out. */
async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) {
    if (event.type === 'raw') continue;
    const { native: _native, ...typed } = event as ModelStreamEvent & { native?: unknown };
    out.push(typed as ModelStreamEvent);
  }
  return out;
}

/** Tool calls assembled from a stream's fragments, as a consumer does. */
function assembled(events: readonly ModelStreamEvent[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const event of events) {
    if (event.type !== 'tool_call_delta') continue;
    const call = (calls[event.index] ??= { id: '', name: '', arguments: '' });
    if (event.id !== undefined) call.id = event.id;
    if (event.name !== undefined) call.name = event.name;
    call.arguments += event.arguments ?? '';
  }
  return calls;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

/** The first event of a stream, or its error. */
async function firstEvent(provider: ModelProvider, request: GenerationRequest): Promise<unknown> {
  const events = provider.stream(request, options())[Symbol.asyncIterator]();
  return rejection(events.next());
}

/** Tool calls compared by id, name and arguments as JSON values (providers may reformat them). */
function parsedCalls(calls: readonly ToolCall[] | undefined): unknown[] | undefined {
  return calls?.map(({ id, name, arguments: args }) => ({
    id,
    name,
    arguments: JSON.parse(args) as unknown,
  }));
}

/**
 * The contract every model provider keeps (issue 29 item 6): answers whole and streamed with
 * their usage, tool calls both ways, upstream HTTP errors as typed retryable-or-not errors with
 * the status, message and Retry-After, a refused connection, a cancel in mid-stream that closes
 * the upstream's response, and the provider's own deadline.
 */
export function describeProviderContract(name: string, subject: ProviderSubject): void {
  const runs = (c: ContractCase): typeof test | typeof test.skip =>
    subject.cases.includes(c) ? test : test.skip;

  describe(`${name} keeps the provider contract`, () => {
    runs('complete')('a whole answer carries the text, end_turn and the usage', async () => {
      const expected = subject.answer(
        { text: 'Hello there, contract', usage: { inputTokens: 9, outputTokens: 3 } },
        plain,
      );
      const response = await subject.create(new FakeClock()).complete(plain, options());
      expect(response.text).toBe(expected.text);
      expect(response.stopReason).toBe('end_turn');
      expect(response.usage).toEqual(expected.usage);
      expect(response.toolCalls).toBeUndefined();
    });

    runs('stream')('a streamed answer comes in several deltas and ends with one finished', async () => {
      const expected = subject.answer(
        { text: 'Hello there, streaming contract', usage: { inputTokens: 11, outputTokens: 4 } },
        plain,
      );
      const events = await collect(subject.create(new FakeClock()).stream(plain, options()));
      const deltas = events.filter((e) => e.type === 'delta');
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.map((e) => e.text).join('')).toBe(expected.text);
      expect(events.at(-1)).toEqual({ type: 'finished', stopReason: 'end_turn', usage: expected.usage });
      expect(events.filter((e) => e.type === 'finished')).toHaveLength(1);
    });

    runs('tool-history')('a conversation with tools, a tool call and its result is answered', async () => {
      const expected = subject.answer(
        { text: 'It is cold in Oslo', usage: { inputTokens: 30, outputTokens: 5 } },
        withTools,
      );
      const provider = subject.create(new FakeClock());
      expect((await provider.complete(withTools, options())).text).toBe(expected.text);
      subject.answer(expected, withTools);
      const events = await collect(provider.stream(withTools, options()));
      expect(events.at(-1)).toMatchObject({ type: 'finished', stopReason: 'end_turn' });
    });

    runs('tool-calls')('tool calls come whole and as fragments, ending with tool_calls', async () => {
      const script = { text: '', usage: { inputTokens: 40, outputTokens: 12 }, toolCalls: TOOL_CALLS };
      subject.answer(script, withTools);
      const provider = subject.create(new FakeClock());
      const response = await provider.complete(withTools, options());
      expect(response.stopReason).toBe('tool_calls');
      expect(parsedCalls(response.toolCalls)).toEqual(parsedCalls(TOOL_CALLS));
      expect(response.usage).toEqual(script.usage);

      subject.answer(script, withTools);
      const events = await collect(provider.stream(withTools, options()));
      expect(parsedCalls(assembled(events))).toEqual(parsedCalls(TOOL_CALLS));
      expect(events.at(-1)).toEqual({ type: 'finished', stopReason: 'tool_calls', usage: script.usage });
    });

    describe.each([
      { status: 401, message: 'invalid api key', retryAfter: undefined, retryable: false },
      { status: 429, message: 'rate limit reached', retryAfter: '7', retryable: true },
      { status: 503, message: 'upstream is down', retryAfter: '2', retryable: true },
      { status: 500, message: 'internal failure', retryAfter: undefined, retryable: true },
    ])('upstream $status', ({ status, message, retryAfter, retryable }) => {
      const check = (error: unknown): void => {
        expect(error).toBeInstanceOf(ProviderError);
        const failure = error as ProviderError;
        expect(failure.status).toBe(status);
        expect(failure.retryable).toBe(retryable);
        expect(failure.message).toContain(`HTTP ${status}`);
        expect(failure.message).not.toContain(PROMPT);
        expect(failure.upstream).toMatchObject({ status, error: { message } });
        expect(failure.upstream?.retryAfter).toBe(retryAfter);
        expect(failure.wireForm()).toMatchObject({
          status,
          retryable,
          ...(retryAfter ? { retryAfter } : {}),
        });
      };
      runs('upstream-errors')(
        'fails typed with the status, message and Retry-After, whole and streamed',
        async () => {
          const provider = subject.create(new FakeClock());
          subject.fail!({ status, message, ...(retryAfter ? { retryAfter } : {}) });
          check(await rejection(provider.complete(plain, options())));
          subject.fail!({ status, message, ...(retryAfter ? { retryAfter } : {}) });
          check(await firstEvent(provider, plain));
        },
      );
    });

    runs('connection-refused')('a refused connection is a retryable error naming the endpoint', async () => {
      for (const error of [
        await rejection(subject.refused!().complete(plain, options())),
        await firstEvent(subject.refused!(), plain),
      ]) {
        expect(error).toBeInstanceOf(ProviderError);
        expect((error as ProviderError).retryable).toBe(true);
        expect((error as ProviderError).message).toMatch(
          /could not reach http:\/\/127\.0\.0\.1:\d+.*ECONNREFUSED/,
        );
      }
    });

    runs('cancel')(
      'a cancel mid-stream ends it with the abort reason and closes the upstream response',
      async () => {
        subject.stall();
        const controller = new AbortController();
        const events = subject.create(new FakeClock()).stream(plain, options({ signal: controller.signal }));
        const iterator = events[Symbol.asyncIterator]();
        let first = await iterator.next();
        while (!first.done && first.value.type === 'raw') first = await iterator.next();
        expect(first.value).toMatchObject({ type: 'delta' });
        const reason = new Error('cancelled by the contract');
        const pending = iterator.next();
        controller.abort(reason);
        await expect(pending).rejects.toBe(reason);
        if (subject.openResponses)
          await vi.waitFor(() => expect(subject.openResponses!()).toBe(0), { timeout: 5_000 });
      },
    );

    runs('deadline')(
      'the call ends at its own deadline, waiting for an answer or in mid-stream',
      async () => {
        const clock = new FakeClock();
        const provider = subject.create(clock);
        subject.hang!();
        const whole = rejection(provider.complete(plain, options({ timeoutMs: 5_000 })));
        await vi.waitFor(() => expect(subject.openResponses!()).toBe(1), { timeout: 5_000 });
        clock.advance(5_000);
        const error = await whole;
        expect(error).toBeInstanceOf(ProviderError);
        expect((error as ProviderError).message).toMatch(/did not answer within 5000 ms/);
        expect((error as ProviderError).retryable).toBe(true);

        subject.stall();
        const iterator = provider.stream(plain, options({ timeoutMs: 5_000 }))[Symbol.asyncIterator]();
        let first = await iterator.next();
        while (!first.done && first.value.type === 'raw') first = await iterator.next();
        expect(first.value).toMatchObject({ type: 'delta' });
        const pending = rejection(iterator.next());
        clock.advance(5_000);
        expect((await pending) as ProviderError).toMatchObject({
          message: expect.stringMatching(/within 5000 ms/),
        });
        await vi.waitFor(() => expect(subject.openResponses!()).toBe(0), { timeout: 5_000 });
      },
    );
  });
}
