import type { FakeReply, RecordedRequest } from '../../../runtime/test/helpers/fake-openai-server.js';

// A script for the fake OpenAI upstream behind the real qwen agent: the agent wraps the
// user's prompt in its own long request (system prompt, 17 tools, a skills reminder), so the
// test steers the model through markers in the prompt text, which reaches the upstream as the
// last text part of the last user message.
//
//   [write <absolute path>]  the model calls write_file for that path (asks permission)
//   [slow <ms>]              the answer starts after <ms>
//   [hang]                   the model never answers (until the call is aborted)
//   [fail <status>]          the upstream answers that HTTP error status
//   anything else            the answer is `echo: <prompt text>`, streamed word by word
// After a tool ran (the last message is the tool's result) the model answers `tool done`.

/** The text of the last text part of the last user message of a chat-completions body. */
export function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages)
    ? (body.messages as { role?: string; content?: unknown }[])
    : [];
  const user = messages.findLast((m) => m.role === 'user');
  if (typeof user?.content === 'string') return user.content;
  if (!Array.isArray(user?.content)) return '';
  const texts = (user.content as { type?: string; text?: unknown }[]).filter(
    (part) => part.type === 'text' && typeof part.text === 'string',
  );
  return String(texts.at(-1)?.text ?? '');
}

/** The reply the script gives `request`. */
export function qwenScript(request: RecordedRequest): FakeReply {
  const messages = request.body.messages as { role?: string }[] | undefined;
  if (messages?.at(-1)?.role === 'tool') return { text: 'tool done' };
  const text = lastUserText(request.body);
  const write = /\[write (\/\S+)\]/.exec(text);
  if (write)
    return {
      toolCalls: [
        {
          name: 'write_file',
          arguments: JSON.stringify({ file_path: write[1], content: 'written by qwen\n' }),
        },
      ],
    };
  if (text.includes('[hang]')) return { hang: true };
  const fail = /\[fail (\d{3})\]/.exec(text);
  if (fail) return { status: Number(fail[1]), error: { message: `scripted failure ${fail[1]}` } };
  const slow = /\[slow (\d+)\]/.exec(text);
  return { text: `echo: ${text}`, ...(slow ? { delayMs: Number(slow[1]) } : {}) };
}
