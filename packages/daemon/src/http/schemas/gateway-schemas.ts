import * as z from 'zod/mini';
import { documented } from './common-schemas.js';

// The model gateway's OpenAI chat-completions wire. `readChatRequest` (gateway/) reads a body
// losslessly into the runtime's request; `ChatCompletionRequest` accepts exactly the bodies it
// accepts (a property test holds the two together) and describes them in the API document.

const Part = z.looseObject({ type: documented(z.string(), '`text`, `image_url`, … passed through.') });
const content = z.optional(z.nullable(z.union([z.string(), z.array(Part)])));
const name = z.optional(z.string());
const toolCalls = z.optional(
  documented(z.unknown(), 'Tool calls; function calls are typed, others relayed.'),
);

/** One chat message; a `tool` message must name the call it answers. */
const ChatMessage = z.discriminatedUnion('role', [
  z.looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant']),
    content,
    name,
    tool_call_id: z.optional(z.string()),
    tool_calls: toolCalls,
  }),
  z.looseObject({ role: z.literal('tool'), content, name, tool_call_id: z.string(), tool_calls: toolCalls }),
]);

/** `POST /v1/chat/completions`: every field besides these is forwarded to the provider as it came. */
export const ChatCompletionRequest = z.looseObject({
  model: z.optional(documented(z.string().check(z.minLength(1)), "Default: the provider's default model.")),
  messages: z.array(ChatMessage).check(z.minLength(1)),
  stream: z.optional(z.nullable(documented(z.boolean(), 'Answer as server-sent chunks.'))),
  stream_options: z.optional(
    documented(z.unknown(), '`{"include_usage": true}` adds the closing usage chunk to a stream.'),
  ),
});

/** `200` of a call that does not stream: the provider's completion, or one built from the runtime's answer. */
export const ChatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.int(),
  model: z.string(),
  choices: z.array(z.looseObject({ index: z.int(), message: z.looseObject({ role: z.string() }) })),
  usage: z.optional(z.unknown()),
});

/** The chunks of a streamed call. */
export const ChatCompletionChunks = documented(
  z.string(),
  'Server-sent events: `data: <chat.completion.chunk JSON>` frames, then `data: [DONE]`.',
);

/** `GET /v1/models`: the provider's default model and the others it names. */
export const ModelList = z.looseObject({
  object: z.literal('list'),
  data: z.array(
    z.looseObject({ id: z.string(), object: z.literal('model'), created: z.int(), owned_by: z.string() }),
  ),
});

/** `GET /session/:id/prompts/:promptId/calls`: a prompt's model calls from the journal, no prompt text. */
export const PromptCalls = z.looseObject({
  calls: z.array(
    z.looseObject({
      callId: z.string(),
      taskId: z.string(),
      at: z.iso.datetime(),
      kind: z.enum(['complete', 'stream']),
      provider: z.string(),
      model: z.string(),
      timeoutMs: z.number(),
      outcome: z.enum(['success', 'error', 'pending']),
      stopReason: z.optional(z.string()),
      usage: z.optional(z.looseObject({ inputTokens: z.number(), outputTokens: z.number() })),
      durationMs: z.optional(z.number()),
      toolCalls: z.optional(documented(z.array(z.string()), 'Names of the tools the model called.')),
      error: z.optional(z.looseObject({ code: z.string(), message: z.string() })),
    }),
  ),
});
