import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { readChatRequest } from '../../src/gateway/index.js';
import { ChatCompletionRequest } from '../../src/http/schemas/gateway-schemas.js';
import { PromptBody, explainPromptBody } from '../../src/http/schemas/prompt-schemas.js';

// The API document is generated from the zod schemas; these properties hold the schemas to what
// the routes really accept, over generated bodies near the edges of each rule.

const scalar = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null));
const maybe = <T>(value: fc.Arbitrary<T>) => fc.oneof(value, scalar);

const block = fc.oneof(
  fc.record(
    {
      type: fc.oneof(fc.constantFrom('text', 'image', 'audio', 'resource_link', 'resource', 'other'), scalar),
      text: maybe(fc.string()),
      data: maybe(fc.string()),
      mimeType: maybe(fc.string()),
      uri: maybe(fc.string()),
      name: maybe(fc.string()),
      resource: fc.oneof(fc.record({ uri: maybe(fc.string()) }, { requiredKeys: [] }), scalar),
    },
    { requiredKeys: [] },
  ),
  scalar,
  fc.array(scalar, { maxLength: 2 }),
);
const promptBody = fc.record(
  {
    prompt: fc.oneof(fc.array(block, { maxLength: 3 }), scalar),
    deadlineMs: fc.oneof(fc.integer({ min: -2, max: 2 ** 31 + 1 }), fc.double(), scalar),
  },
  { requiredKeys: [] },
);

const FOUND_NOTHING = 'a block does not match its type';

describe('POST /session/:id/prompt: the schema and its explanations agree', () => {
  test('a prompt the schema refuses is explained by its block and field; one it accepts has no fault', () => {
    fc.assert(
      fc.property(promptBody, (body) => {
        const accepted = PromptBody.shape.prompt.safeParse(body.prompt).success;
        const explained = explainPromptBody({ code: 'custom', path: ['prompt'], message: '' } as never, body);
        expect((explained as { code?: string }).code).toBe('invalid_prompt');
        expect(explained.message.endsWith(FOUND_NOTHING), explained.message).toBe(accepted);
      }),
      { numRuns: 2_000 },
    );
  });

  test('a refused body names the field that is wrong, with the stable code of that field', () => {
    fc.assert(
      fc.property(promptBody, (body) => {
        const result = PromptBody.safeParse(body);
        if (result.success) return;
        const error = explainPromptBody(result.error.issues[0]!, body) as Error & { code: string };
        expect(['invalid_prompt', 'invalid_deadline_ms']).toContain(error.code);
        expect(error.message).not.toContain(FOUND_NOTHING);
      }),
      { numRuns: 2_000 },
    );
  });
});

const content = fc.oneof(
  fc.string({ maxLength: 3 }),
  fc.constant(null),
  fc.constant(undefined),
  fc.integer(),
  fc.array(fc.oneof(fc.record({ type: maybe(fc.string({ maxLength: 3 })) }, { requiredKeys: [] }), scalar), {
    maxLength: 2,
  }),
);
const message = fc.oneof(
  fc.record(
    {
      role: fc.oneof(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'robot'), scalar),
      content,
      name: maybe(fc.string({ maxLength: 3 })),
      tool_call_id: maybe(fc.string({ maxLength: 3 })),
      tool_calls: fc.oneof(scalar, fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 2 })),
    },
    { requiredKeys: [] },
  ),
  scalar,
);
const chatBody = fc.oneof(
  fc.record(
    {
      model: maybe(fc.string({ maxLength: 3 })),
      messages: fc.oneof(fc.array(message, { maxLength: 3 }), scalar),
      stream: maybe(fc.boolean()),
      stream_options: fc.jsonValue({ maxDepth: 1 }),
      temperature: fc.double(),
    },
    { requiredKeys: [] },
  ),
  scalar,
  fc.array(scalar, { maxLength: 1 }),
);

/** Whether the model gateway's reader takes `body`. */
function gatewayAccepts(body: unknown): boolean {
  try {
    readChatRequest(body);
    return true;
  } catch (error) {
    expect((error as { code?: string }).code).toBe('invalid_chat_request');
    return false;
  }
}

test('POST /v1/chat/completions: the documented schema accepts exactly the bodies the gateway reads', () => {
  fc.assert(
    fc.property(chatBody, (body) => {
      expect(ChatCompletionRequest.safeParse(body).success, JSON.stringify(body)).toBe(gatewayAccepts(body));
    }),
    { numRuns: 3_000 },
  );
});
