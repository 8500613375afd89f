import { MAX_TIMER_MS } from '@sluice/runtime';
import * as z from 'zod/mini';
import {
  InvalidDeadlineError,
  InvalidPromptError,
  MAX_IDEMPOTENCY_KEY_CHARS,
  type ContentBlock as WireContentBlock,
} from '../../sessions/index.js';
import { BUDGET_ID } from '../../budgets/index.js';
import { StreamPosition, documented } from './common-schemas.js';
import { fieldOf, type InputIssue } from './parse-input.js';
import { invalidBody } from './request-body.js';

// The content blocks of ACP (schema of `@agentclientprotocol/sdk` 2.4): the string fields each
// type it defines requires. Blocks of other types pass through as they are.
const text = z.string();
const TextBlock = z.looseObject({ type: z.literal('text'), text });
const ImageBlock = z.looseObject({ type: z.literal('image'), data: text, mimeType: text });
const AudioBlock = z.looseObject({ type: z.literal('audio'), data: text, mimeType: text });
const ResourceLinkBlock = z.looseObject({ type: z.literal('resource_link'), uri: text, name: text });
const ResourceBlock = z.looseObject({ type: z.literal('resource'), resource: z.looseObject({ uri: text }) });
const KNOWN_TYPES: readonly string[] = ['text', 'image', 'audio', 'resource_link', 'resource'];
const OtherBlock = z.looseObject({
  type: documented(
    z.string().check(z.refine((type) => !KNOWN_TYPES.includes(type))),
    'A block type ACP does not define here; passed to the agent as it is.',
    { not: { enum: KNOWN_TYPES } },
  ),
});

/** One ACP content block of a prompt. */
export const ContentBlock = documented(
  z.union([TextBlock, ImageBlock, AudioBlock, ResourceLinkBlock, ResourceBlock, OtherBlock]),
  'An ACP content block; at least `text`.',
);

/** `POST /session/:id/prompt` (PROTOCOL §5). */
export const PromptBody = z.looseObject({
  prompt: documented(z.array(ContentBlock).check(z.minLength(1)), 'The prompt: a non-empty array.'),
  deadlineMs: z.optional(
    z.nullable(
      documented(
        z.int().check(z.gte(1), z.lte(MAX_TIMER_MS)),
        'Ends the prompt this long after admission, at the latest (with the daemon-wide deadline).',
      ),
    ),
  ),
  budgetId: z.optional(
    documented(
      z.string().check(z.regex(BUDGET_ID)),
      "A durable budget (`POST /budgets`) this prompt's model calls are charged to; unknown → 404.",
    ),
  ),
});

/** String fields of the block types ACP defines, for the explanation of a failed block. */
const REQUIRED_STRINGS: Partial<Record<string, readonly string[]>> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name'],
};

/** Why `prompt` is not a valid prompt (an `invalid_prompt` naming the block and field), if it is not. */
function promptFault(prompt: unknown): InvalidPromptError | undefined {
  if (!Array.isArray(prompt))
    return new InvalidPromptError(`got ${prompt === null ? 'null' : typeof prompt}`);
  if (prompt.length === 0) return new InvalidPromptError('got an empty array');
  for (let index = 0; index < prompt.length; index++) {
    const block: unknown = prompt[index];
    if (typeof block !== 'object' || block === null || Array.isArray(block))
      return new InvalidPromptError(`block ${index} is not an object`);
    const { type } = block as { type?: unknown };
    if (typeof type !== 'string') return new InvalidPromptError(`block ${index} has no string "type"`);
    for (const field of REQUIRED_STRINGS[type] ?? [])
      if (typeof (block as Record<string, unknown>)[field] !== 'string')
        return new InvalidPromptError(`block ${index} (${type}) needs a string "${field}"`);
    if (type === 'resource') {
      const { resource } = block as { resource?: { uri?: unknown } };
      if (typeof resource !== 'object' || resource === null || typeof resource.uri !== 'string')
        return new InvalidPromptError(`block ${index} (resource) needs a "resource" with a string "uri"`);
    }
  }
  return undefined;
}

/** Why `deadlineMs` is not absent or a positive integer the clock can represent, if it is not. */
function deadlineFault(deadlineMs: unknown): InvalidDeadlineError | undefined {
  if (deadlineMs === undefined || deadlineMs === null) return undefined;
  return Number.isInteger(deadlineMs) && (deadlineMs as number) >= 1 && (deadlineMs as number) <= MAX_TIMER_MS
    ? undefined
    : new InvalidDeadlineError(deadlineMs, MAX_TIMER_MS);
}

/**
 * The prompt route's body, checked by hand against the rules of {@link PromptBody}: the route
 * answers `503` at the rate of a bare server under overload (SPEC BP-8), and a zod parse of every
 * refused prompt cost more there than the 3 % allowed (docs/decisions/024). A property test holds
 * the two to the same verdict and the same error on every body.
 */
export function readPromptBody(raw: unknown): {
  prompt: readonly WireContentBlock[];
  deadlineMs: number | undefined;
} {
  const body = raw ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidBody();
  const { prompt, deadlineMs } = body as { prompt?: unknown; deadlineMs?: unknown };
  const fault = promptFault(prompt) ?? deadlineFault(deadlineMs);
  if (fault !== undefined) throw fault;
  return {
    prompt: prompt as readonly WireContentBlock[],
    deadlineMs: (deadlineMs as number | null | undefined) ?? undefined,
  };
}

/** The error of a body {@link PromptBody} refused: `invalid_prompt` or `invalid_deadline_ms`. */
export const explainPromptBody = (issue: InputIssue, body: Record<string, unknown>): Error => {
  switch (fieldOf(issue)) {
    case 'prompt':
      return promptFault(body['prompt']) ?? new InvalidPromptError(PROMPT_FAULT_NOT_FOUND);
    case 'deadlineMs':
      return deadlineFault(body['deadlineMs']) ?? new InvalidDeadlineError(body['deadlineMs'], MAX_TIMER_MS);
    default:
      return invalidBody();
  }
};

/** What {@link explainPromptBody} says when its rules find nothing wrong where the schema did. */
export const PROMPT_FAULT_NOT_FOUND = 'a block does not match its type';

/** `202` of a prompt: admitted, and where to replay its events from. */
export const PromptAccepted = z.looseObject({
  promptId: documented(z.string(), 'A fresh UUID; the terminal event carries it.'),
  ...StreamPosition,
});

/** `GET /session/:id/pending-prompts`: the running prompt first, then the queued ones. */
export const PendingPrompts = z.looseObject({
  pendingPrompts: z.array(
    z.looseObject({
      promptId: z.string(),
      text: z.string(),
      queuedAt: documented(z.number(), 'Epoch milliseconds.'),
      state: z.enum(['running', 'queued']),
      originatorClientId: z.optional(z.string()),
    }),
  ),
});

/** `DELETE /session/:id/pending-prompts/:promptId`. */
export const PromptRemoved = z.looseObject({
  removed: documented(z.boolean(), 'False when the prompt had already ended.'),
});

/** `:id` and `:promptId` of the routes of one prompt. */
export const PromptParams = z.object({ id: z.string(), promptId: z.string() });

/** Printable ASCII, no spaces at the ends: what a UUID or any sane key is. */
export const IDEMPOTENCY_KEY = new RegExp(
  `^[\\x21-\\x7e](?:[\\x20-\\x7e]{0,${MAX_IDEMPOTENCY_KEY_CHARS - 2}}[\\x21-\\x7e])?$`,
);

/** `Idempotency-Key` of a prompt (issue 19 item 12). */
export const IdempotencyKeyHeader = documented(
  z.string().check(z.regex(IDEMPOTENCY_KEY)),
  'A retry with the same key and body answers the first `202` again instead of admitting twice.',
);
