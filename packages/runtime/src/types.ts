import type { ModelStopReason } from '@sluice/protocol';

/**
 * One part of a message's content in the OpenAI content-part shape (`text`, `image_url`,
 * `input_audio`, `file`, …). The runtime reads only `text` parts; the others travel unchanged.
 */
export interface ContentPart {
  type: string;
  text?: string;
  [field: string]: unknown;
}

/**
 * A tool call the model made, or an assistant message's earlier one. `arguments` is the JSON text
 * as the model wrote it; `extra` holds the wire fields the runtime does not interpret.
 */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Other fields of the wire tool call (besides `id`, `type`, `function`), sent back verbatim. */
  extra?: Record<string, unknown>;
}

/** One message of a chat conversation sent to a model. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'developer';
  /** Text, content parts, or null (an assistant message that only calls tools). */
  content: string | ContentPart[] | null;
  name?: string;
  toolCallId?: string;
  /** The tool calls of an assistant message. */
  toolCalls?: ToolCall[];
  /** Other fields of the wire message, sent verbatim (e.g. `reasoning_content`). */
  extra?: Record<string, unknown>;
}

/** A tool the model may call, described by a JSON schema. */
export interface ToolSpec {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/**
 * What the caller asks a model to generate. The whole object — `extra` included — is what
 * `maxRequestBytes` counts and what the journal records (SCH-17).
 */
export interface GenerationRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** Upper bound of generated tokens, passed to the provider. */
  maxOutputTokens?: number;
  temperature?: number;
  /**
   * Request fields the runtime does not interpret (`tool_choice`, `response_format`, `stop`,
   * `seed`, native `tools`, unknown fields, …), in the provider's wire form: an OpenAI-compatible
   * provider sends them verbatim as top-level body fields. The model gateway keeps a client's
   * body lossless this way.
   */
  extra?: Record<string, unknown>;
}

/** Token counts reported by a provider for one call. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * Why a model call stopped: an ACP stop reason, or `tool_calls` when the model asks for tools
 * (an agent then runs them and calls again).
 */
export type GenerationStopReason = ModelStopReason | 'tool_calls';

/** A complete (non-streamed) model answer. */
export interface ModelResponse {
  text: string;
  stopReason: GenerationStopReason;
  usage: Usage;
  /** The tool calls the model made, when it made any. */
  toolCalls?: ToolCall[];
  /**
   * The provider's own answer object (an OpenAI `chat.completion`), when it has one: the model
   * gateway relays it unchanged, unknown fields included. Never recorded in the journal.
   */
  native?: unknown;
}

/** A fragment of a streamed tool call: `id` and `name` come first, `arguments` in pieces. */
export interface ToolCallDelta {
  type: 'tool_call_delta';
  /** Which tool call of the answer the fragment belongs to. */
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
  native?: unknown;
}

/**
 * One event of a streamed answer: text deltas, tool-call fragments, provider chunks carrying
 * nothing typed (`raw`), then exactly one `finished`. `native`, when present, is the provider's
 * own chunk (an OpenAI `chat.completion.chunk`) the event came from, for the gateway to relay
 * unchanged; a chunk that yields several events is carried by the first of them only.
 */
export type ModelStreamEvent =
  | { type: 'delta'; text: string; native?: unknown }
  | ToolCallDelta
  | { type: 'raw'; native: unknown }
  | { type: 'finished'; stopReason: GenerationStopReason; usage: Usage; toolCalls?: ToolCall[] };

/** What the runtime hands a provider besides the request (SCH-8). */
export interface ProviderCallOptions {
  /** Aborted at the call's absolute deadline, on cancellation and on shutdown. */
  signal: AbortSignal;
  /** The effective timeout fixed at admission — the same value the journal records. */
  timeoutMs: number;
  /** The model name to use; the provider's default when absent. */
  model?: string;
}

/**
 * A model backend. The runtime owns scheduling, deadlines, retries and recording; a provider
 * only performs one call and honours the abort signal.
 */
export interface ModelProvider {
  /** Short identifier recorded in the journal (`echo`, `openai`, …). */
  readonly name: string;
  /** The model used when a call names none. */
  readonly defaultModel: string;
  /** Further model names the provider can serve, when it knows them (listed by `/v1/models`). */
  readonly models?: readonly string[];
  complete(request: GenerationRequest, options: ProviderCallOptions): Promise<ModelResponse>;
  stream(request: GenerationRequest, options: ProviderCallOptions): AsyncIterable<ModelStreamEvent>;
}

/** The text of a message's content: the string, or its `text` parts joined. */
export function contentText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (content === null) return '';
  let text = '';
  for (const part of content) if (part.type === 'text' && typeof part.text === 'string') text += part.text;
  return text;
}
