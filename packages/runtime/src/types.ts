import type { ModelStopReason } from '@sluice/protocol';

/** One message of a chat conversation sent to a model. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  toolCallId?: string;
}

/** A tool the model may call, described by a JSON schema. */
export interface ToolSpec {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** What the caller asks a model to generate; counted by `maxRequestBytes` (SCH-17). */
export interface GenerationRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** Upper bound of generated tokens, passed to the provider. */
  maxOutputTokens?: number;
  temperature?: number;
}

/** Token counts reported by a provider for one call. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** A complete (non-streamed) model answer. */
export interface ModelResponse {
  text: string;
  stopReason: ModelStopReason;
  usage: Usage;
}

/** One event of a streamed answer: text deltas, then exactly one `finished`. */
export type ModelStreamEvent =
  { type: 'delta'; text: string } | { type: 'finished'; stopReason: ModelStopReason; usage: Usage };

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
  complete(request: GenerationRequest, options: ProviderCallOptions): Promise<ModelResponse>;
  stream(request: GenerationRequest, options: ProviderCallOptions): AsyncIterable<ModelStreamEvent>;
}
