import type OpenAI from 'openai';
import { ProviderError } from '../errors.js';
import type {
  ChatMessage,
  GenerationRequest,
  GenerationStopReason,
  ModelStreamEvent,
  ToolCall,
  Usage,
} from '../types.js';

/** A chat-completions body as the provider sends it: typed members plus the request's `extra`. */
export type WireBody = Record<string, unknown> & { model: string; messages: unknown[] };

/**
 * The wire body of `request`: its `extra` fields verbatim, then the members the runtime owns
 * (model, messages, and the typed options when set) — so nothing a client sent is lost and
 * nothing it sent can override the model the call was admitted for.
 */
export function wireBody(request: GenerationRequest, model: string): WireBody {
  const body: WireBody = { ...request.extra, model, messages: request.messages.map(toWireMessage) };
  if (request.maxOutputTokens !== undefined) body.max_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
      },
    }));
  }
  return body;
}

/** The streaming form: the client's `stream_options` kept, usage always asked for (budgets need it). */
export function streamingBody(request: GenerationRequest, model: string): WireBody {
  const body = wireBody(request, model);
  const options = request.extra?.stream_options;
  body.stream = true;
  body.stream_options = { ...(isObject(options) ? options : {}), include_usage: true };
  return body;
}

function toWireMessage(message: ChatMessage, index: number): Record<string, unknown> {
  const { role, content } = message;
  if (
    role !== 'system' &&
    role !== 'user' &&
    role !== 'assistant' &&
    role !== 'tool' &&
    role !== 'developer'
  ) {
    throw new ProviderError(`messages[${index}] has unsupported role ${JSON.stringify(role)}`, false);
  }
  if (role === 'tool' && !message.toolCallId) {
    throw new ProviderError(`messages[${index}] has role "tool" but no toolCallId`, false);
  }
  const wire: Record<string, unknown> = { ...message.extra, role, content };
  if (message.name !== undefined) wire.name = message.name;
  if (message.toolCallId !== undefined) wire.tool_call_id = message.toolCallId;
  if (message.toolCalls !== undefined) wire.tool_calls = message.toolCalls.map(toWireToolCall);
  return wire;
}

function toWireToolCall(call: ToolCall): Record<string, unknown> {
  return {
    ...call.extra,
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  };
}

/** The typed tool calls of a whole answer (function calls; others stay in the native answer). */
export function toolCallsOf(message: OpenAI.Chat.ChatCompletionMessage): ToolCall[] | undefined {
  const wire = message.tool_calls;
  if (!Array.isArray(wire) || wire.length === 0) return undefined;
  const calls: ToolCall[] = [];
  for (const raw of wire) {
    if (raw.type !== 'function') continue;
    const { id, type: _type, function: fn, ...extra } = raw;
    const call: ToolCall = { id, name: fn.name, arguments: fn.arguments };
    if (Object.keys(extra).length > 0) call.extra = extra;
    calls.push(call);
  }
  return calls.length > 0 ? calls : undefined;
}

/**
 * The events of one stream chunk: its text, then its tool-call fragments; the chunk itself rides
 * on the first, or on a `raw` event when it carries nothing typed (role, finish reason, usage).
 */
export function chunkEvents(chunk: OpenAI.Chat.ChatCompletionChunk): ModelStreamEvent[] {
  const delta = chunk.choices?.[0]?.delta;
  const events: ModelStreamEvent[] = [];
  // A refusal streams in its own field; it is the answer's text, as in `complete`.
  const text = delta?.content || delta?.refusal;
  if (text) events.push({ type: 'delta', text, native: chunk });
  for (const fragment of delta?.tool_calls ?? []) {
    const event: ModelStreamEvent = { type: 'tool_call_delta', index: fragment.index ?? 0 };
    if (fragment.id) event.id = fragment.id;
    if (fragment.function?.name) event.name = fragment.function.name;
    if (fragment.function?.arguments) event.arguments = fragment.function.arguments;
    if (events.length === 0) event.native = chunk;
    events.push(event);
  }
  if (events.length === 0) events.push({ type: 'raw', native: chunk });
  return events;
}

export function stopReasonOf(finishReason: string | null | undefined): GenerationStopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    default:
      // `stop`, null and unknown values.
      return 'end_turn';
  }
}

export function usageOf(usage: OpenAI.CompletionUsage | null | undefined): Usage {
  return { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
