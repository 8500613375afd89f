/**
 * What the real Messages API refuses with a 400 that a translation bug would produce: the fake
 * Anthropic server answers such a body the same way, so tests catch the bug, not only the shape.
 * Returns the refusal's message, or undefined for a body the API takes.
 */
export function checkMessagesBody(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return 'max_tokens: Field required (a positive integer)';
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system))
    return 'system: Input should be a string or a list of text blocks';
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return 'messages: at least one message is required';
  for (const name of Object.keys(body))
    if (!ALLOWED.has(name)) return `${name}: Extra inputs are not permitted`;
  let previous: { role: string; content: Record<string, unknown>[] } | undefined;
  for (const [i, message] of (body.messages as Record<string, unknown>[]).entries()) {
    const role = message.role;
    if (role !== 'user' && role !== 'assistant')
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (previous?.role === role) return `messages.${i}: roles must alternate between "user" and "assistant"`;
    const content =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : (message.content as Record<string, unknown>[]);
    if (!Array.isArray(content) || content.length === 0) return `messages.${i}: content must be non-empty`;
    for (const [j, block] of content.entries()) {
      const refusal = checkBlock(block, previous);
      if (refusal !== undefined) return `messages.${i}.content.${j}: ${refusal}`;
    }
    previous = { role, content };
  }
  return undefined;
}

const ALLOWED: ReadonlySet<string> = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'tools',
  'tool_choice',
  'metadata',
  'thinking',
  'service_tier',
]);

function checkBlock(
  block: Record<string, unknown>,
  previous: { role: string; content: Record<string, unknown>[] } | undefined,
): string | undefined {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' && block.text !== ''
        ? undefined
        : 'text content blocks must be non-empty';
    case 'tool_use':
      return typeof block.input === 'object' && block.input !== null && !Array.isArray(block.input)
        ? undefined
        : 'tool_use.input: Input should be a valid dictionary';
    case 'tool_result': {
      const answered =
        previous?.role === 'assistant' && previous.content.some((b) => b.id === block.tool_use_id);
      return answered
        ? undefined
        : 'tool_result block(s) provided without a tool_use block in the previous message';
    }
    case 'image':
    case 'document':
      return typeof block.source === 'object' && block.source !== null ? undefined : 'source: Field required';
    default:
      return `Input tag '${String(block.type)}' does not match any of the expected tags`;
  }
}
