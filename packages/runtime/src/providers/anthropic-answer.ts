import type Anthropic from '@anthropic-ai/sdk';
import type { GenerationStopReason, ModelResponse, ModelStreamEvent, ToolCall, Usage } from '../types.js';

/** The Messages API's stop reasons in the runtime's terms; `null` and unknown ones end the turn. */
export function stopReasonOf(reason: string | null | undefined): GenerationStopReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'refusal';
    default:
      // end_turn, stop_sequence, pause_turn.
      return 'end_turn';
  }
}

/** Anthropic's usage fields as they may come (the stream's deltas carry only some). */
interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Input tokens count cache writes and reads too: every one of them is billed as input. */
function inputTokensOf(usage: WireUsage): number | undefined {
  const parts = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens];
  if (parts.every((part) => typeof part !== 'number')) return undefined;
  return parts.reduce<number>((sum, part) => sum + (typeof part === 'number' ? part : 0), 0);
}

export function usageOf(usage: WireUsage | null | undefined): Usage {
  return { inputTokens: inputTokensOf(usage ?? {}) ?? 0, outputTokens: usage?.output_tokens ?? 0 };
}

/**
 * A whole Messages answer in the runtime's types: its text blocks joined, its `tool_use` blocks
 * as tool calls (the input as JSON text). No `native`: the model gateway relays a native answer
 * as an OpenAI completion, which an Anthropic message is not; it builds one from these fields.
 */
export function responseOf(message: Anthropic.Message): ModelResponse {
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use')
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
  }
  const response: ModelResponse = {
    text,
    stopReason: stopReasonOf(message.stop_reason),
    usage: usageOf(message.usage),
  };
  if (toolCalls.length > 0) response.toolCalls = toolCalls;
  return response;
}

/**
 * Reads one Messages stream: text deltas become `delta`s, a `tool_use` block its `tool_call_delta`s
 * (id and name first, then the `input_json_delta` pieces; numbered among the tool calls, as the
 * chat-completions wire numbers them), usage comes from `message_start` and `message_delta`.
 */
export class MessageStreamReader {
  /** Set by `message_stop`: a stream that ends before it was cut short. */
  ended = false;
  stopReason: GenerationStopReason = 'end_turn';
  private input = 0;
  private output = 0;
  /** Content block index → tool call index. */
  private readonly tools = new Map<number, number>();
  /** Tool calls that received arguments; one that got none is given `{}` at its block's end. */
  private readonly withArguments = new Set<number>();

  get usage(): Usage {
    return { inputTokens: this.input, outputTokens: this.output };
  }

  /** The runtime events of one wire event (often none). */
  read(event: Anthropic.RawMessageStreamEvent): ModelStreamEvent[] {
    switch (event.type) {
      case 'message_start':
        this.count(event.message.usage);
        return [];
      case 'content_block_start':
        return this.blockStart(event);
      case 'content_block_delta':
        return this.blockDelta(event);
      case 'content_block_stop':
        return this.blockStop(event.index);
      case 'message_delta':
        if (event.delta.stop_reason) this.stopReason = stopReasonOf(event.delta.stop_reason);
        this.count(event.usage);
        return [];
      case 'message_stop':
        this.ended = true;
        return [];
      default:
        return [];
    }
  }

  private count(usage: WireUsage | null | undefined): void {
    if (usage === null || usage === undefined) return;
    this.input = inputTokensOf(usage) ?? this.input;
    // Cumulative: each `message_delta` restates the output so far.
    if (typeof usage.output_tokens === 'number') this.output = usage.output_tokens;
  }

  private blockStart(event: Anthropic.RawContentBlockStartEvent): ModelStreamEvent[] {
    const block = event.content_block;
    if (block.type === 'text') return block.text ? [{ type: 'delta', text: block.text }] : [];
    if (block.type !== 'tool_use') return [];
    const index = this.tools.size;
    this.tools.set(event.index, index);
    return [{ type: 'tool_call_delta', index, id: block.id, name: block.name }];
  }

  private blockDelta(event: Anthropic.RawContentBlockDeltaEvent): ModelStreamEvent[] {
    const { delta } = event;
    if (delta.type === 'text_delta') return delta.text ? [{ type: 'delta', text: delta.text }] : [];
    const index = this.tools.get(event.index);
    if (delta.type !== 'input_json_delta' || index === undefined || !delta.partial_json) return [];
    this.withArguments.add(index);
    return [{ type: 'tool_call_delta', index, arguments: delta.partial_json }];
  }

  private blockStop(blockIndex: number): ModelStreamEvent[] {
    const index = this.tools.get(blockIndex);
    if (index === undefined || this.withArguments.has(index)) return [];
    return [{ type: 'tool_call_delta', index, arguments: '{}' }];
  }
}
