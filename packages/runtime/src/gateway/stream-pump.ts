import { ProviderError } from '../errors.js';
import type { ModelProvider, ToolCall, ToolCallDelta } from '../types.js';
import type { Call, Outcome } from './call.js';
import type { StreamChannel } from './stream-channel.js';

/**
 * Runs `call` as a stream: pulls `provider`'s stream only as fast as the consumer reads
 * `channel`, and ends with the outcome the one `finished` event carries.
 */
export async function pumpStream(
  provider: ModelProvider,
  call: Call,
  channel: StreamChannel,
): Promise<Outcome> {
  const iterator = provider.stream(call.request, call)[Symbol.asyncIterator]();
  let text = '';
  let toolCalls: ToolCall[] | undefined;
  try {
    for (;;) {
      await channel.demand(call);
      const step = await call.race(iterator.next());
      // A stream owes exactly one `finished`: one that ends without it was cut short, and
      // passing it off as a whole answer would record a truncated text as a success.
      if (step.done) throw new ProviderError(`${provider.name} ended its stream without finished`, false);
      const event = step.value;
      if (event.type === 'finished') {
        // Nothing more is pulled: close the provider's stream so that its cleanup runs.
        closeQuietly(iterator);
        const calls = event.toolCalls ?? toolCalls;
        return calls === undefined
          ? { text, stopReason: event.stopReason, usage: event.usage }
          : { text, stopReason: event.stopReason, usage: event.usage, toolCalls: calls };
      }
      if (event.type === 'delta') text += event.text;
      else if (event.type === 'tool_call_delta') toolCalls = addToolCallDelta(toolCalls ?? [], event);
      channel.deliver(event);
    }
  } catch (error) {
    closeQuietly(iterator);
    throw error;
  }
}

/** Merges one streamed fragment into the answer's tool calls (recorded whole in the journal). */
function addToolCallDelta(calls: ToolCall[], delta: ToolCallDelta): ToolCall[] {
  const call = (calls[delta.index] ??= { id: '', name: '', arguments: '' });
  if (delta.id) call.id = delta.id;
  if (delta.name) call.name += delta.name;
  if (delta.arguments) call.arguments += delta.arguments;
  return calls;
}

/**
 * Closes a provider's stream the runtime stops pulling, without waiting: a `return()` that
 * throws or rejects is the provider's trouble and never replaces the call's own outcome.
 */
function closeQuietly(iterator: AsyncIterator<unknown>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) Promise.resolve(closing).catch(() => undefined);
  } catch {
    // ignored, as above
  }
}
