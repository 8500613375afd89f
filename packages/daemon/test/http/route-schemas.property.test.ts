import { MAX_TIMER_MS } from '@sluice/runtime';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { readChatRequest } from '../../src/gateway/index.js';
import { ChatCompletionRequest } from '../../src/http/schemas/gateway-schemas.js';
import {
  PROMPT_FAULT_NOT_FOUND,
  PromptBody,
  explainPromptBody,
  readPromptBody,
} from '../../src/http/schemas/prompt-schemas.js';

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
    // The edges of the rule: 1 and the timer's maximum, and just past each.
    deadlineMs: fc.oneof(
      fc.constantFrom(0, 1, MAX_TIMER_MS, MAX_TIMER_MS + 1, 1.5),
      fc.integer({ min: -2, max: 2 ** 31 + 1 }),
      fc.double(),
      scalar,
    ),
  },
  { requiredKeys: [] },
);

/** What the route does with `body`: its prompt, or the error it answers with. */
function routeReads(body: unknown): { accepted: true } | { accepted: false; error: Error } {
  try {
    readPromptBody(body);
    return { accepted: true };
  } catch (error) {
    return { accepted: false, error: error as Error };
  }
}

describe('POST /session/:id/prompt: the route and its documented schema agree', () => {
  test('the route accepts exactly the bodies PromptBody accepts', () => {
    fc.assert(
      fc.property(fc.oneof(promptBody, scalar), (body) => {
        expect(routeReads(body).accepted, JSON.stringify(body)).toBe(
          PromptBody.safeParse(body ?? {}).success,
        );
      }),
      { numRuns: 3_000 },
    );
  });

  test('a refused body gets the error the schema’s first issue explains: same code, same message', () => {
    fc.assert(
      fc.property(promptBody, (body) => {
        const result = PromptBody.safeParse(body);
        if (result.success) return;
        const explained = explainPromptBody(result.error.issues[0]!, body) as Error & { code: string };
        const read = routeReads(body);
        expect(read.accepted).toBe(false);
        if (read.accepted) return;
        expect((read.error as Error & { code: string }).code).toBe(explained.code);
        expect(read.error.message).toBe(explained.message);
        expect(explained.message).not.toContain(PROMPT_FAULT_NOT_FOUND);
      }),
      { numRuns: 3_000 },
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
