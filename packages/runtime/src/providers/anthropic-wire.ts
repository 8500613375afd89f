import { ProviderError } from '../errors.js';
import { plainJson } from '../raw-json.js';
import {
  contentText,
  type ChatMessage,
  type ContentPart,
  type GenerationRequest,
  type ToolSpec,
} from '../types.js';

/** `max_tokens` of a call that names none: the Messages API requires one. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** One content block of an Anthropic message, as sent. */
type Block = Record<string, unknown> & { type: string };
/** One message of the Messages API: the roles alternate, `system` is not one of them. */
interface WireMessage {
  role: 'user' | 'assistant';
  content: Block[];
}
/** A Messages API body as the provider sends it. */
export type MessagesBody = Record<string, unknown> & {
  model: string;
  max_tokens: number;
  messages: WireMessage[];
};

/** Fields a client may send in the Messages API's own form; they travel verbatim. */
const NATIVE_FIELDS: ReadonlySet<string> = new Set([
  'metadata',
  'service_tier',
  'stop_sequences',
  'thinking',
  'top_k',
  'top_p',
  'temperature',
]);

/**
 * The Messages API body of `request`: system and developer messages become `system`, tool
 * results become `tool_result` blocks of a user turn, an assistant's tool calls `tool_use`
 * blocks, and turns of one role in a row merge (the API wants them alternating). `extra` is read
 * in the chat-completions form the model gateway keeps (`tools`, `tool_choice`, `stop`,
 * `max_tokens`, `user`, …) and translated; fields without an Anthropic meaning are left out.
 */
export function messagesBody(request: GenerationRequest, model: string, maxTokens: number): MessagesBody {
  const extra = request.extra ?? {};
  const system: string[] = [];
  const messages: WireMessage[] = [];
  request.messages.forEach((message, index) => addMessage(messages, system, message, index));
  const body: MessagesBody = {
    ...nativeFields(extra),
    model,
    max_tokens: request.maxOutputTokens ?? tokenLimitOf(extra) ?? maxTokens,
    messages,
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (request.temperature !== undefined) body.temperature = request.temperature;
  const stop = extra.stop;
  if (typeof stop === 'string') body.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop;
  const tools =
    request.tools !== undefined && request.tools.length > 0
      ? request.tools
      : wireTools(plainJson(extra.tools));
  if (tools !== undefined && tools.length > 0) body.tools = tools.map(toolOf);
  const choice = toolChoiceOf(extra.tool_choice, extra.parallel_tool_calls);
  if (choice !== undefined) body.tool_choice = choice;
  if (typeof extra.user === 'string' && !isObject(extra.metadata)) body.metadata = { user_id: extra.user };
  return body;
}

function nativeFields(extra: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(extra)) if (NATIVE_FIELDS.has(name)) fields[name] = value;
  return fields;
}

function tokenLimitOf(extra: Record<string, unknown>): number | undefined {
  const limit = extra.max_completion_tokens ?? extra.max_tokens;
  return typeof limit === 'number' ? limit : undefined;
}

function addMessage(messages: WireMessage[], system: string[], message: ChatMessage, index: number): void {
  switch (message.role) {
    case 'system':
    case 'developer': {
      const text = contentText(message.content);
      if (text !== '') system.push(text);
      return;
    }
    case 'user':
      return push(messages, 'user', contentBlocks(message.content, index));
    case 'assistant':
      return push(messages, 'assistant', assistantBlocks(message, index));
    case 'tool':
      if (!message.toolCallId)
        throw new ProviderError(`messages[${index}] has role "tool" but no toolCallId`, false);
      return push(messages, 'user', [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: contentBlocks(message.content, index),
        },
      ]);
    default:
      throw new ProviderError(
        `messages[${index}] has unsupported role ${JSON.stringify((message as { role: unknown }).role)}`,
        false,
      );
  }
}

/** Appends `content` as a turn of `role`, merged into the last turn when it has the same role. */
function push(messages: WireMessage[], role: WireMessage['role'], content: Block[]): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last?.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

function assistantBlocks(message: ChatMessage, index: number): Block[] {
  const blocks = contentBlocks(message.content, index);
  (message.toolCalls ?? []).forEach((call, j) => {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: toolInput(call.arguments, index, j),
    });
  });
  return blocks;
}

function toolInput(text: string, index: number, call: number): Record<string, unknown> {
  if (text.trim() === '') return {};
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    input = undefined;
  }
  if (!isObject(input))
    throw new ProviderError(
      `messages[${index}].toolCalls[${call}].arguments must be a JSON object for Anthropic`,
      false,
    );
  return input;
}

/** Text as one text block (none when empty: the API refuses empty text), parts translated. */
function contentBlocks(content: ChatMessage['content'], index: number): Block[] {
  if (content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const blocks: Block[] = [];
  for (const part of content) {
    const block = partBlock(part, index);
    if (block !== undefined) blocks.push(block);
  }
  return blocks;
}

function partBlock(part: ContentPart, index: number): Block | undefined {
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' && part.text !== ''
        ? { type: 'text', text: part.text }
        : undefined;
    case 'image_url':
      return imageBlock(part, index);
    case 'image':
    case 'document':
      // Already in the Messages API's form.
      return part as Block;
    default:
      throw new ProviderError(
        `messages[${index}] has a content part of type ${JSON.stringify(part.type)}, which Anthropic does not take`,
        false,
      );
  }
}

/** An OpenAI `image_url` part: a `data:` URL becomes a base64 source, any other URL a url source. */
function imageBlock(part: ContentPart, index: number): Block {
  const field = part.image_url;
  const url = typeof field === 'string' ? field : isObject(field) ? field.url : undefined;
  if (typeof url !== 'string')
    throw new ProviderError(`messages[${index}] has an image_url part without a url`, false);
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data !== null) return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] } };
  return { type: 'image', source: { type: 'url', url } };
}

/** The chat-completions `tools` of a gateway request (function tools), as tool specs. */
function wireTools(tools: unknown): ToolSpec[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const specs: ToolSpec[] = [];
  for (const tool of tools) {
    const fn =
      isObject(tool) && tool.type === 'function' && isObject(tool.function) ? tool.function : undefined;
    if (fn === undefined || typeof fn.name !== 'string') continue;
    const spec: ToolSpec = { name: fn.name };
    if (typeof fn.description === 'string') spec.description = fn.description;
    if (isObject(fn.parameters)) spec.parameters = fn.parameters;
    specs.push(spec);
  }
  return specs;
}

function toolOf(tool: ToolSpec): Record<string, unknown> {
  return {
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    input_schema: tool.parameters ?? { type: 'object', properties: {} },
  };
}

/** `tool_choice` in either form (`auto`/`none`/`required`/a function, or Anthropic's own). */
function toolChoiceOf(choice: unknown, parallel: unknown): Record<string, unknown> | undefined {
  let translated: Record<string, unknown> | undefined;
  if (choice === 'auto' || choice === 'none') translated = { type: choice };
  else if (choice === 'required') translated = { type: 'any' };
  else if (isObject(choice) && choice.type === 'function' && isObject(choice.function))
    translated = { type: 'tool', name: choice.function.name };
  else if (isObject(choice)) translated = { ...choice };
  if (parallel === false && translated?.type !== 'none')
    translated = { ...(translated ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return translated;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
