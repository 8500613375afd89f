import type { GenerationStopReason, ModelResponse, ModelStreamEvent, ToolCall, Usage } from '@sluice/runtime';
import { clipStrings, mapError, type MappedError } from '../wire/index.js';

/** What an OpenAI client reads from an error answer. */
export interface OpenAIErrorAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: { error: Record<string, unknown> };
}

/**
 * Any error as an OpenAI-style answer, with the status, headers and stable `code` of the one
 * error table (wire/error-map.ts). An upstream's own error object is relayed as it came, its
 * texts clipped to 200 characters (an upstream may quote a client's 300 KiB model name).
 */
export function openAIError(error: unknown): OpenAIErrorAnswer {
  const mapped: MappedError = mapError(error);
  const { body } = mapped;
  const upstream = body['upstream'];
  if (typeof upstream === 'object' && upstream !== null && !Array.isArray(upstream))
    return {
      statusCode: mapped.statusCode,
      headers: mapped.headers,
      body: { error: clipStrings(upstream as Record<string, unknown>) },
    };
  const message = typeof body['error'] === 'string' ? body['error'] : 'Internal server error';
  const code = typeof body['code'] === 'string' ? body['code'] : null;
  return {
    statusCode: mapped.statusCode,
    headers: mapped.headers,
    body: { error: { message, type: errorType(mapped.statusCode), param: null, code } },
  };
}

function errorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status === 401) return 'authentication_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

const FINISH_REASONS: Record<GenerationStopReason, string> = {
  end_turn: 'stop',
  max_tokens: 'length',
  tool_calls: 'tool_calls',
  refusal: 'content_filter',
  cancelled: 'stop',
};

/** Who answers: the completion's id, creation time and model name. */
export interface CompletionHead {
  id: string;
  created: number;
  model: string;
}

/** The provider's own completion when it has one (relayed unchanged), else one built from the typed answer. */
export function completionBody(response: ModelResponse, head: CompletionHead): unknown {
  const native = response.native;
  // The provider's own answer, naming the catalogue's model that gave it (a fallback, an alias).
  if (typeof native === 'object' && native !== null) return named(native, head.model);
  const message: Record<string, unknown> = { role: 'assistant', content: response.text };
  if (response.toolCalls !== undefined) message['tool_calls'] = response.toolCalls.map(wireToolCall);
  return {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    choices: [{ index: 0, message, finish_reason: FINISH_REASONS[response.stopReason], logprobs: null }],
    usage: wireUsage(response.usage),
  };
}

/**
 * Turns a model stream's events into SSE data lines. A provider chunk (`native`) is relayed as
 * it came; a provider without chunks (the echo model) gets chunks built from the typed events.
 */
export class ChunkWriter {
  private relayed = false;
  private started = false;

  constructor(
    private readonly head: CompletionHead,
    private readonly includeUsage: boolean,
  ) {}

  /** The SSE frames for `event` (possibly none). */
  frames(event: ModelStreamEvent): string {
    if (event.type !== 'finished' && 'native' in event && event.native !== undefined) {
      this.relayed = true;
      const chunk = event.native as { choices?: unknown[]; usage?: unknown };
      // The provider always asks for usage (budgets need it); a client that did not gets none.
      if (!this.includeUsage && chunk.usage && Array.isArray(chunk.choices) && chunk.choices.length === 0)
        return '';
      return frame(named(chunk, this.head.model));
    }
    if (this.relayed || event.type === 'raw') return '';
    let out = '';
    if (!this.started) {
      this.started = true;
      out += this.chunk({ role: 'assistant', content: '' }, null);
    }
    switch (event.type) {
      case 'delta':
        return out + this.chunk({ content: event.text }, null);
      case 'tool_call_delta': {
        const fragment: Record<string, unknown> = { index: event.index };
        if (event.id !== undefined) Object.assign(fragment, { id: event.id, type: 'function' });
        const fn: Record<string, unknown> = {};
        if (event.name !== undefined) fn['name'] = event.name;
        if (event.arguments !== undefined) fn['arguments'] = event.arguments;
        fragment['function'] = fn;
        return out + this.chunk({ tool_calls: [fragment] }, null);
      }
      case 'finished':
        out += this.chunk({}, FINISH_REASONS[event.stopReason]);
        if (this.includeUsage) out += frame({ ...this.base(), choices: [], usage: wireUsage(event.usage) });
        return out;
    }
  }

  private base(): Record<string, unknown> {
    const { id, created, model } = this.head;
    return { id, object: 'chat.completion.chunk', created, model };
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null): string {
    return frame({ ...this.base(), choices: [{ index: 0, delta, finish_reason: finishReason }] });
  }
}

/** `body` with `model` naming the catalogue's model, copied only when it names another. */
function named(body: object, model: string): object {
  return (body as { model?: unknown }).model === model ? body : { ...body, model };
}

/** One SSE data frame. */
export function frame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** The stream's last frame. */
export const DONE_FRAME = 'data: [DONE]\n\n';

function wireToolCall(call: ToolCall): Record<string, unknown> {
  return {
    ...call.extra,
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  };
}

function wireUsage(usage: Usage): Record<string, number> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}
