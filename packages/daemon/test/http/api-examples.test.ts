import * as z from 'zod/mini';
import { describe, expect, test } from 'vitest';
import { buildOpenApiDocument } from '../../src/http/openapi/openapi-document.js';
import { ROUTES } from '../../src/http/routes/index.js';

// Issue 30 item 4: `/docs` shows each operation with a description and an example. The examples
// are the route descriptions' own, so each must be what the route's schema reads or answers.

type Media = { example?: unknown };
type Operation = {
  operationId: string;
  description?: string;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};

const document = buildOpenApiDocument('0.0.0', ROUTES) as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));

/** The examples an operation shows: its request body's and its answers'. */
function examples(operation: Operation): unknown[] {
  const media = [
    ...Object.values(operation.requestBody?.content ?? {}),
    ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
  ];
  return media.filter((item) => item.example !== undefined).map((item) => item.example);
}

describe('the API document, as /docs shows it', () => {
  test('every operation has a description of its own', () => {
    expect(operations.length).toBe(ROUTES.length);
    const bare = operations
      .filter((op) => (op.description ?? '').trim().length < 20)
      .map((op) => op.operationId);
    expect(bare).toEqual([]);
  });

  test('every operation shows an example request or answer', () => {
    const without = operations.filter((op) => examples(op).length === 0).map((op) => op.operationId);
    expect(without).toEqual([]);
  });

  test("every example is what the route's schema reads or answers", () => {
    const wrong: string[] = [];
    for (const route of ROUTES) {
      const where = `${route.method} ${route.path}`;
      const body = route.body;
      if (body?.example !== undefined && !z.safeParse(body.schema, body.example).success)
        wrong.push(`${where} request`);
      for (const [status, answer] of Object.entries(route.responses))
        if (answer.example !== undefined && answer.schema !== undefined)
          if (!z.safeParse(answer.schema, answer.example).success) wrong.push(`${where} ${status}`);
    }
    expect(wrong).toEqual([]);
  });
});
