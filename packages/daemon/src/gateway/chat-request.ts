import { CataloguedError, describeValue } from '@sluice/protocol';
import {
  RawJson,
  type ChatMessage,
  type ContentPart,
  type GenerationRequest,
  type ToolCall,
} from '@sluice/runtime';
import { jsonSourceOf, topLevelMembers, type MemberSpan } from '../wire/index.js';

/** A `/v1/chat/completions` body read into what the runtime takes. */
export interface ChatRequest {
  request: GenerationRequest;
  /** The model the client named; the provider's default when absent. */
  model: string | undefined;
  stream: boolean;
  /** Whether a streaming client asked for the closing usage chunk. */
  includeUsage: boolean;
}

const ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
/** Members of the body the gateway interprets; every other one is forwarded verbatim. */
const OWN_FIELDS: ReadonlySet<string> = new Set(['model', 'messages', 'stream']);
const MESSAGE_FIELDS: ReadonlySet<string> = new Set([
  'role',
  'content',
  'name',
  'tool_call_id',
  'tool_calls',
]);

/**
 * Members passed on as the bytes the client sent ({@link RawJson}) when the body's bytes are
 * known and the member is at least {@link RAW_MEMBER_MIN_BYTES}: large, sent alike with every
 * call by agents, and read by no part of the runtime but a provider of another family.
 */
const RAW_MEMBERS: ReadonlySet<string> = new Set(['tools', 'functions', 'response_format']);
const RAW_MEMBER_MIN_BYTES = 1_024;

/**
 * How deep a body may nest objects and arrays. Far beyond any real request (tool schemas nest a
 * few dozen levels), and below the runtime's own limit, so a deeper body is the client's error.
 */
export const MAX_BODY_DEPTH = 128;

/** A malformed chat request (`400`), with a message saying what to fix. */
export class InvalidChatRequestError extends CataloguedError<'invalid_chat_request'> {
  readonly code = 'invalid_chat_request';
}

/**
 * Reads a chat-completions body losslessly: messages become typed `ChatMessage`s (with their
 * unknown fields in `extra`), and every top-level field besides `model`, `messages` and
 * `stream` goes to `request.extra`, which the provider sends as it came — the large ones of
 * {@link RAW_MEMBERS} as their bytes, when the body was parsed keeping them (`jsonSourceOf`):
 * those members of `body` are replaced in place.
 */
export function readChatRequest(body: unknown): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidChatRequestError('the request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const raw = useRawMembers(fields);
  if (nestedDeeperThan(body, MAX_BODY_DEPTH, raw))
    throw new InvalidChatRequestError(
      `the request body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep; flatten it`,
    );
  const { model, messages, stream } = fields;
  if (model !== undefined && (typeof model !== 'string' || model === ''))
    throw new InvalidChatRequestError(`"model" must be a non-empty string, got ${describeValue(model)}`);
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean')
    throw new InvalidChatRequestError(`"stream" must be a boolean, got ${describeValue(stream)}`);
  if (!Array.isArray(messages) || messages.length === 0)
    throw new InvalidChatRequestError('"messages" must be a non-empty array of messages');
  const request: GenerationRequest = { messages: messages.map(readMessage) };
  const extra = othersOf(fields, OWN_FIELDS);
  if (extra !== undefined) request.extra = extra;
  const options = fields['stream_options'];
  const includeUsage =
    typeof options === 'object' &&
    options !== null &&
    (options as { include_usage?: unknown }).include_usage === true;
  return { request, model: model as string | undefined, stream: stream === true, includeUsage };
}

function readMessage(raw: unknown, index: number): ChatMessage {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new InvalidChatRequestError(`messages[${index}] must be an object`);
  const fields = raw as Record<string, unknown>;
  const { role, content, name, tool_call_id: toolCallId, tool_calls: toolCalls } = fields;
  if (typeof role !== 'string' || !ROLES.has(role))
    throw new InvalidChatRequestError(
      `messages[${index}].role must be one of ${[...ROLES].join(', ')}, got ${describeValue(role)}`,
    );
  const message: ChatMessage = { role: role as ChatMessage['role'], content: readContent(content, index) };
  if (name !== undefined) {
    if (typeof name !== 'string')
      throw new InvalidChatRequestError(`messages[${index}].name must be a string`);
    message.name = name;
  }
  if (toolCallId !== undefined) {
    if (typeof toolCallId !== 'string')
      throw new InvalidChatRequestError(`messages[${index}].tool_call_id must be a string`);
    message.toolCallId = toolCallId;
  }
  if (role === 'tool' && message.toolCallId === undefined)
    throw new InvalidChatRequestError(`messages[${index}] has role "tool" but no tool_call_id`);
  let extra = othersOf(fields, MESSAGE_FIELDS);
  if (toolCalls !== undefined && toolCalls !== null) {
    const typed = readToolCalls(toolCalls);
    // Tool calls of another shape (not functions) travel verbatim instead of typed.
    if (typed !== undefined) message.toolCalls = typed;
    else extra = { ...extra, tool_calls: toolCalls };
  }
  if (extra !== undefined) message.extra = extra;
  return message;
}

function readContent(content: unknown, index: number): ChatMessage['content'] {
  if (content === undefined || content === null || typeof content === 'string') return content ?? null;
  if (!Array.isArray(content))
    throw new InvalidChatRequestError(
      `messages[${index}].content must be a string, an array of parts or null`,
    );
  content.forEach((part: unknown, p) => {
    if (typeof part !== 'object' || part === null || typeof (part as { type?: unknown }).type !== 'string')
      throw new InvalidChatRequestError(
        `messages[${index}].content[${p}] must be an object with a string "type"`,
      );
  });
  return content as ContentPart[];
}

/** Function tool calls as typed `ToolCall`s; undefined when any has another shape. */
function readToolCalls(raw: unknown): ToolCall[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const calls: ToolCall[] = [];
  for (const item of raw) {
    if (typeof item !== 'object' || item === null) return undefined;
    const { id, type, function: fn, ...rest } = item as Record<string, unknown>;
    if (typeof id !== 'string' || type !== 'function' || typeof fn !== 'object' || fn === null)
      return undefined;
    const { name, arguments: args, ...fnRest } = fn as Record<string, unknown>;
    if (typeof name !== 'string' || typeof args !== 'string' || Object.keys(fnRest).length > 0)
      return undefined;
    const call: ToolCall = { id, name, arguments: args };
    if (Object.keys(rest).length > 0) call.extra = rest;
    calls.push(call);
  }
  return calls;
}

/** The members of `fields` not in `known`, or undefined when there are none. */
function othersOf(
  fields: Record<string, unknown>,
  known: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  let others: Record<string, unknown> | undefined;
  for (const key of Object.keys(fields)) {
    if (known.has(key)) continue;
    (others ??= {})[key] = fields[key];
  }
  return others;
}

/**
 * Replaces the body's large {@link RAW_MEMBERS} by their bytes in its source, when that is known,
 * and returns their spans (none otherwise). In place, so that their parsed values (thousands of
 * objects for an agent's tool schemas) are garbage at once instead of living, through the
 * request's body, as long as the call.
 */
function useRawMembers(body: Record<string, unknown>): Map<string, MemberSpan> {
  const source = jsonSourceOf(body);
  if (source === undefined || source.length < RAW_MEMBER_MIN_BYTES) return new Map();
  const spans = topLevelMembers(source, RAW_MEMBERS) ?? new Map<string, MemberSpan>();
  for (const [key, { start, end }] of spans) {
    if (end - start < RAW_MEMBER_MIN_BYTES || typeof body[key] !== 'object' || body[key] === null)
      spans.delete(key);
    else body[key] = RawJson.ofParsedSpan(source, start, end);
  }
  return spans;
}

/**
 * Whether `value` nests objects or arrays more than `limit` levels deep (no recursion); the
 * top-level members in `spans` count by the depth their bytes were scanned to.
 */
function nestedDeeperThan(value: unknown, limit: number, spans: Map<string, MemberSpan>): boolean {
  const stack: Array<[unknown, number]> = [];
  for (const [key, child] of Object.entries(value as object)) {
    const span = spans.get(key);
    if (span !== undefined) {
      if (1 + span.depth > limit) return true;
    } else if (typeof child === 'object' && child !== null) stack.push([child, 2]);
  }
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (depth > limit) return true;
    for (const child of Object.values(node as object))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
