import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import { systemClock, type Clock } from '../clock.js';
import { ProviderError } from '../errors.js';
import { positiveInteger } from '../validate.js';
import type {
  GenerationRequest,
  ModelProvider,
  ModelResponse,
  ModelStreamEvent,
  ProviderCallOptions,
} from '../types.js';
import { MessageStreamReader, responseOf } from './anthropic-answer.js';
import { DEFAULT_ANTHROPIC_MAX_TOKENS, isObject, messagesBody } from './anthropic-wire.js';
import { HttpCallScope, httpURL, nonEmptyEnv, transportError, unreachable } from './http-call-scope.js';
import { detail, statusError } from './openai-http.js';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Options of {@link AnthropicProvider}; `baseURL` and `apiKey` fall back to the environment. */
export interface AnthropicProviderOptions {
  /** Model used when a call names none (`claude-sonnet-4-5`, …). */
  model: string;
  /** Base URL without `/v1`; default `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`. */
  baseURL?: string;
  /** API key; default `ANTHROPIC_API_KEY`. Without either no credential is sent. */
  apiKey?: string;
  /** `max_tokens` of a call that sets no output bound; default 4096. */
  maxTokens?: number;
  defaultHeaders?: Record<string, string>;
  /** Clock for the per-call timeout; default the system clock. */
  clock?: Clock;
}

type CreateParams = Anthropic.MessageCreateParamsNonStreaming;
type StreamParams = Anthropic.MessageCreateParamsStreaming;

/**
 * A provider for the Anthropic Messages API (`POST /v1/messages`) through `@anthropic-ai/sdk`,
 * translated to and from the runtime's OpenAI-shaped types (anthropic-wire.ts, anthropic-answer.ts).
 * One HTTP call per request — retries belong to the runtime — bounded as a whole, stream
 * included, by the timeout it is told; errors map to {@link ProviderError} as the OpenAI
 * provider's do (status, Retry-After, the upstream's error object for the gateway).
 */
export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';
  readonly defaultModel: string;
  /** The endpoint as named in error messages: origin and path, never credentials or query. */
  readonly endpoint: string;
  readonly maxTokens: number;
  private readonly client: Anthropic;
  private readonly clock: Clock;

  constructor(options: AnthropicProviderOptions) {
    if (typeof options?.model !== 'string' || options.model.trim() === '') {
      throw new TypeError(`model must be a non-empty string, got ${JSON.stringify(options?.model)}`);
    }
    this.maxTokens = positiveInteger('maxTokens', options.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS);
    const baseURL = httpURL(options.baseURL ?? nonEmptyEnv('ANTHROPIC_BASE_URL') ?? DEFAULT_BASE_URL);
    const apiKey = options.apiKey || nonEmptyEnv('ANTHROPIC_API_KEY');
    this.defaultModel = options.model;
    this.endpoint = `${baseURL.origin}${baseURL.pathname.replace(/\/+$/, '')}`;
    this.clock = options.clock ?? systemClock;
    this.client = new Anthropic({
      baseURL: this.endpoint,
      // A key passed in keeps the SDK from its credential chain (files, other variables); a
      // keyless local server gets a placeholder whose header is removed.
      apiKey: apiKey ?? 'no-key',
      defaultHeaders: {
        ...options.defaultHeaders,
        ...(apiKey === undefined ? { Authorization: null, 'X-Api-Key': null } : {}),
      },
      maxRetries: 0,
      // Spans and the SDK's own log could carry prompt text; the runtime journals calls itself.
      openTelemetry: false,
      logLevel: 'off',
    });
  }

  /** One non-streaming call; rejects with `signal.reason` on abort, else a {@link ProviderError}. */
  async complete(request: GenerationRequest, options: ProviderCallOptions): Promise<ModelResponse> {
    const scope = this.scope(options);
    try {
      const body = this.body(request, options) as unknown as CreateParams;
      const message = await this.client.messages.create({ ...body, stream: false }, scope.requestOptions);
      if (!isObject(message) || !Array.isArray(message.content))
        throw new ProviderError(`${this.endpoint} returned no message`, false);
      return responseOf(message);
    } catch (error) {
      throw scope.translate(error);
    } finally {
      scope.dispose();
    }
  }

  /**
   * One streaming call: text `delta`s and `tool_call_delta`s as the events arrive, then one
   * `finished` with the stop reason and usage of `message_delta`. A stream that ends without
   * `message_stop` was cut short and fails. Throws `signal.reason` on abort, else a
   * {@link ProviderError}.
   */
  async *stream(request: GenerationRequest, options: ProviderCallOptions): AsyncGenerator<ModelStreamEvent> {
    const scope = this.scope(options);
    let completed = false;
    try {
      let events: AsyncIterator<Anthropic.RawMessageStreamEvent>;
      try {
        const body = this.body(request, options) as unknown as StreamParams;
        const stream = await this.client.messages.create({ ...body, stream: true }, scope.requestOptions);
        events = stream[Symbol.asyncIterator]();
      } catch (error) {
        throw scope.translate(error);
      }
      const reader = new MessageStreamReader();
      for (;;) {
        let next: IteratorResult<Anthropic.RawMessageStreamEvent>;
        try {
          next = await events.next();
        } catch (error) {
          throw scope.translate(error);
        }
        // The client ends an aborted stream quietly; an abort must not look like a clean end.
        scope.throwIfStopped();
        if (next.done) break;
        for (const event of reader.read(next.value)) yield event;
      }
      if (!reader.ended)
        throw new ProviderError(`${this.endpoint} ended the stream before the model finished`, true);
      completed = true;
      // Released before the last event: a consumer may stop pulling once it has `finished`.
      scope.dispose();
      yield { type: 'finished', stopReason: reader.stopReason, usage: reader.usage };
    } finally {
      if (!completed) scope.abandon();
      scope.dispose();
    }
  }

  private body(request: GenerationRequest, options: ProviderCallOptions): Record<string, unknown> {
    return messagesBody(request, options.model ?? this.defaultModel, this.maxTokens);
  }

  private scope(options: ProviderCallOptions): HttpCallScope {
    const isTimeout = (error: unknown): boolean => error instanceof APIConnectionTimeoutError;
    return new HttpCallScope(this.endpoint, this.clock, options, isTimeout, toProviderError);
  }
}

/** Error types of a stream's `error` event that may pass when tried again. */
const RETRYABLE_TYPES: ReadonlySet<string> = new Set([
  'overloaded_error',
  'api_error',
  'rate_limit_error',
  'timeout_error',
]);

/** Maps a client or transport failure to a ProviderError; messages never carry prompt text. */
function toProviderError(endpoint: string, error: unknown): ProviderError {
  if (error instanceof APIConnectionError) {
    return unreachable(endpoint, error);
  }
  if (error instanceof APIError) {
    // The body is `{type: "error", error: {type, message}}`; the inner object is what is relayed.
    const body = error.error as { error?: unknown } | undefined;
    const inner = isObject(body) && isObject(body.error) ? body.error : undefined;
    if (error.status === undefined) {
      // An `error` event in the middle of a stream: no status, the type says whether to retry.
      const type = typeof inner?.type === 'string' ? inner.type : undefined;
      return new ProviderError(
        `${endpoint} reported an error${detail(type)}`,
        type !== undefined && RETRYABLE_TYPES.has(type),
      );
    }
    const retryAfter = error.headers?.get('retry-after') ?? undefined;
    return statusError(endpoint, error.status, inner ?? body, retryAfter, inner);
  }
  return transportError(endpoint, error);
}
