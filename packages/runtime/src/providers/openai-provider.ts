import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, type ClientOptions } from 'openai';
import { systemClock, type Clock } from '../clock.js';
import { ProviderError } from '../errors.js';
import type {
  GenerationRequest,
  GenerationStopReason,
  ModelProvider,
  ModelResponse,
  ModelStreamEvent,
  ProviderCallOptions,
  Usage,
} from '../types.js';
import { HttpCallScope, httpURL, nonEmptyEnv, transportError, unreachable } from './http-call-scope.js';
import { jsonBytes } from '../json-bytes.js';
import { JsonPoster, detail, httpStatusError, statusError } from './openai-http.js';
import { eventStreamChunks } from './openai-sse.js';
import { chunkEvents, streamingBody, stopReasonOf, toolCallsOf, usageOf, wireBody } from './openai-wire.js';

type CompleteParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type StreamParams = OpenAI.Chat.ChatCompletionCreateParamsStreaming;

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Options of {@link OpenAIProvider}; `baseURL` and `apiKey` fall back to the environment. */
export interface OpenAIProviderOptions {
  /** Model used when a call names none (`gpt-4o-mini`, `qwen-plus`, `llama3.1`, …). */
  model: string;
  /** Base URL including `/v1`; default `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
  baseURL?: string;
  /** Bearer token; default `OPENAI_API_KEY`. Without either no `Authorization` header is sent. */
  apiKey?: string;
  organization?: string;
  defaultHeaders?: Record<string, string>;
  /** Custom `fetch` implementation handed to the `openai` client. */
  fetch?: ClientOptions['fetch'];
  /** Clock for the per-call timeout; default the system clock. */
  clock?: Clock;
}

/**
 * A provider for any OpenAI-compatible chat-completions endpoint (OpenAI, DashScope/Qwen,
 * vLLM, Ollama, llama.cpp). It performs exactly one HTTP call per request — retries belong
 * to the runtime — and bounds the whole call, stream included, by the timeout it is told.
 */
export class OpenAIProvider implements ModelProvider {
  readonly name = 'openai';
  readonly defaultModel: string;
  /** The endpoint as named in error messages: origin and path, never credentials or query. */
  readonly endpoint: string;
  private readonly client: OpenAI;
  private readonly clock: Clock;
  /** Calls over `node:http`; absent when a custom `fetch` was given (the SDK then). */
  private readonly poster: JsonPoster | undefined;

  constructor(options: OpenAIProviderOptions) {
    if (typeof options?.model !== 'string' || options.model.trim() === '') {
      throw new TypeError(`model must be a non-empty string, got ${JSON.stringify(options?.model)}`);
    }
    const baseURL = httpURL(options.baseURL ?? nonEmptyEnv('OPENAI_BASE_URL') ?? DEFAULT_BASE_URL);
    const apiKey = options.apiKey || nonEmptyEnv('OPENAI_API_KEY');
    this.defaultModel = options.model;
    this.endpoint = `${baseURL.origin}${baseURL.pathname.replace(/\/+$/, '')}`;
    this.clock = options.clock ?? systemClock;
    this.client = new OpenAI({
      baseURL: baseURL.href,
      // The client insists on a key; keyless local servers get a placeholder whose header is removed.
      apiKey: apiKey ?? 'no-key',
      organization: options.organization,
      defaultHeaders: { ...options.defaultHeaders, ...(apiKey === undefined ? { Authorization: null } : {}) },
      fetch: options.fetch,
      maxRetries: 0,
    });
    if (options.fetch === undefined) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json',
      };
      if (apiKey !== undefined) headers['authorization'] = `Bearer ${apiKey}`;
      if (options.organization !== undefined) headers['openai-organization'] = options.organization;
      for (const [name, value] of Object.entries(options.defaultHeaders ?? {}))
        headers[name.toLowerCase()] = value;
      const url = new URL(`${this.endpoint}/chat/completions`);
      this.poster = new JsonPoster(url, this.endpoint, headers);
    }
  }

  /** One non-streaming call; rejects with `signal.reason` on abort, else a {@link ProviderError}. */
  async complete(request: GenerationRequest, options: ProviderCallOptions): Promise<ModelResponse> {
    const scope = this.scope(options);
    try {
      // The body is built from the request's typed members and its verbatim `extra` fields.
      const body = wireBody(request, options.model ?? this.defaultModel) as unknown as CompleteParams;
      const completion = await this.completion({ ...body, stream: false }, scope);
      const choice = completion.choices?.[0];
      if (choice?.message === undefined)
        throw new ProviderError(`${this.endpoint} returned no choice`, false);
      const { content, refusal } = choice.message;
      const response: ModelResponse = {
        text: content ?? refusal ?? '',
        stopReason: refusal ? 'refusal' : stopReasonOf(choice.finish_reason),
        usage: usageOf(completion.usage),
        native: completion,
      };
      const toolCalls = toolCallsOf(choice.message);
      if (toolCalls !== undefined) response.toolCalls = toolCalls;
      return response;
    } catch (error) {
      throw scope.translate(error);
    } finally {
      scope.dispose();
    }
  }

  private scope(options: ProviderCallOptions): HttpCallScope {
    const isTimeout = (error: unknown): boolean => error instanceof APIConnectionTimeoutError;
    return new HttpCallScope(this.endpoint, this.clock, options, isTimeout, toProviderError);
  }

  /** The completion the upstream answered, over `node:http` or, with a custom `fetch`, the SDK. */
  private async completion(body: CompleteParams, scope: HttpCallScope): Promise<OpenAI.Chat.ChatCompletion> {
    if (this.poster === undefined) return this.client.chat.completions.create(body, scope.requestOptions);
    const { signal, timeout } = scope.requestOptions;
    const answer = await this.poster.post(jsonBytes(body), signal, timeout);
    if (answer.status < 200 || answer.status >= 300) throw httpStatusError(this.endpoint, answer);
    const completion = JSON.parse(answer.text) as OpenAI.Chat.ChatCompletion | null;
    if (completion === null || typeof completion !== 'object') throw new SyntaxError('not a completion');
    return completion;
  }

  /** A stream's chunks as the upstream sends them, over `node:http` or, with a custom `fetch`, the SDK. */
  private async chunks(
    body: Record<string, unknown>,
    scope: HttpCallScope,
  ): Promise<AsyncIterator<OpenAI.Chat.ChatCompletionChunk>> {
    if (this.poster === undefined) {
      const stream = await this.client.chat.completions.create(
        body as unknown as StreamParams,
        scope.requestOptions,
      );
      return stream[Symbol.asyncIterator]();
    }
    const { signal, timeout } = scope.requestOptions;
    const response = await this.poster.open(jsonBytes(body), signal, timeout);
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await this.poster.textOf(response, signal);
      throw httpStatusError(this.endpoint, { status, headers: response.headers, text });
    }
    const chunks = eventStreamChunks(response, this.poster, this.endpoint, signal);
    return chunks as AsyncIterator<OpenAI.Chat.ChatCompletionChunk>;
  }

  /**
   * One streaming call: per chunk a `delta` (content), `tool_call_delta`s or a `raw` event, each
   * chunk carried as `native`, then one `finished`. Usage is
   * read from the final usage chunk (`stream_options.include_usage`); a server that sends
   * none reports 0 tokens. A stream that ends without a `finish_reason` was cut short and
   * fails. Throws `signal.reason` on abort, else a {@link ProviderError}.
   */
  async *stream(request: GenerationRequest, options: ProviderCallOptions): AsyncGenerator<ModelStreamEvent> {
    const scope = this.scope(options);
    let completed = false;
    try {
      let chunks: AsyncIterator<OpenAI.Chat.ChatCompletionChunk>;
      try {
        chunks = await this.chunks(streamingBody(request, options.model ?? this.defaultModel), scope);
      } catch (error) {
        throw scope.translate(error);
      }
      // Undefined until the model says why it stopped: a stream that ends before is cut short.
      let stopReason: GenerationStopReason | undefined;
      let refused = false;
      let usage: Usage = { inputTokens: 0, outputTokens: 0 };
      let sawUsage = false;
      for (;;) {
        let next: IteratorResult<OpenAI.Chat.ChatCompletionChunk>;
        try {
          next = await chunks.next();
        } catch (error) {
          throw scope.translate(error);
        }
        // The client ends an aborted stream quietly; an abort must not look like a clean end.
        scope.throwIfStopped();
        if (next.done) break;
        const chunk = next.value;
        if (chunk.usage) {
          usage = usageOf(chunk.usage);
          sawUsage = true;
        }
        const choice = chunk.choices?.[0];
        if (choice?.finish_reason) stopReason = stopReasonOf(choice.finish_reason);
        if (choice?.delta?.refusal) refused = true;
        // Every chunk reaches the consumer, so the model gateway can relay the stream unchanged.
        for (const event of chunkEvents(chunk)) yield event;
      }
      // The client does not require `[DONE]`: a connection closed cleanly mid-answer, or a 200
      // body that is not an event stream at all, would otherwise pass for a finished answer.
      // The usage chunk comes last, so a server that never names a finish reason still ends.
      if (stopReason === undefined && !sawUsage) {
        throw new ProviderError(`${this.endpoint} ended the stream before the model finished`, true);
      }
      stopReason ??= 'end_turn';
      if (refused) stopReason = 'refusal';
      completed = true;
      // Released before the last event: a consumer may stop pulling once it has `finished`.
      scope.dispose();
      yield { type: 'finished', stopReason, usage };
    } finally {
      if (!completed) scope.abandon();
      scope.dispose();
    }
  }
}

/** Maps a client or transport failure to a ProviderError; messages never carry prompt text. */
function toProviderError(endpoint: string, error: unknown): ProviderError {
  if (error instanceof APIConnectionError) {
    return unreachable(endpoint, error);
  }
  if (error instanceof APIError) {
    if (error.status === undefined)
      return new ProviderError(`${endpoint} reported an error${detail(error.code ?? error.type)}`, false);
    const retryAfter = error.headers?.get('retry-after') ?? undefined;
    return statusError(endpoint, error.status, error.error, retryAfter, error);
  }
  return transportError(endpoint, error);
}
