import type { ChatMessage, JournalEntry, ModelRequestRecord, ModelResultRecord } from '@sluice/runtime';

// The journal is the audit trail: it holds every prompt and answer. What `sluice journal` prints
// by default carries ids, codes, sizes and usage only, so that its output can be pasted into a
// ticket; `--show-content` adds the text.

/** A request record with its messages and tools replaced by their counts and size. */
type RedactedRequest = Omit<ModelRequestRecord, 'request'> & {
  request: { messages: number; tools: number; bytes: number };
};

/** A result record with its text, tool-call arguments and error message replaced by sizes. */
type RedactedResult = Omit<ModelResultRecord, 'text' | 'toolCalls' | 'error'> & {
  textBytes?: number;
  toolCalls?: Array<{ id: string; name: string }>;
  error?: { code: string };
};

/** One entry as `--json` prints it: `seq` and the record, redacted unless `showContent`. */
export function jsonLine(entry: JournalEntry, showContent: boolean): string {
  const record = showContent ? entry.record : redact(entry.record);
  return JSON.stringify({ seq: entry.seq, ...record });
}

/** The record without prompt or answer text. */
export function redact(record: ModelRequestRecord | ModelResultRecord): RedactedRequest | RedactedResult {
  if (record.type === 'model_request') {
    const { request, ...rest } = record;
    return {
      ...rest,
      request: {
        messages: request.messages.length,
        tools: request.tools?.length ?? 0,
        bytes: Buffer.byteLength(JSON.stringify(request)),
      },
    };
  }
  const { text, toolCalls, error, ...rest } = record;
  const redacted: RedactedResult = { ...rest };
  if (text !== undefined) redacted.textBytes = Buffer.byteLength(text);
  if (toolCalls !== undefined) redacted.toolCalls = toolCalls.map(({ id, name }) => ({ id, name }));
  if (error !== undefined) redacted.error = { code: error.code };
  return redacted;
}

/** One entry as a human reads it: one `key=value` line, then the text when `showContent`. */
export function humanLines(entry: JournalEntry, showContent: boolean): string {
  const { record } = entry;
  const head = [
    record.at,
    `#${entry.seq}`,
    record.type === 'model_request' ? 'request' : 'result ',
    `call=${record.callId}`,
    `session=${record.sessionId ?? '-'}`,
  ];
  // A result names no prompt; its request, with the same call id, does.
  if (record.turnId !== undefined) head.push(`prompt=${record.turnId}`);
  const detail = record.type === 'model_request' ? requestDetail(record) : resultDetail(record);
  const line = [...head, ...detail].join(' ');
  if (!showContent) return line;
  const content = record.type === 'model_request' ? requestContent(record) : resultContent(record);
  return [line, ...content.map((text) => `    ${text}`)].join('\n');
}

function requestDetail(record: ModelRequestRecord): string[] {
  const { options, request } = record;
  const detail = [
    `model=${options.provider}/${options.model}`,
    `kind=${options.kind}`,
    `timeout=${options.timeoutMs}ms`,
    `messages=${request.messages.length}`,
    `bytes=${Buffer.byteLength(JSON.stringify(request))}`,
  ];
  if (request.tools !== undefined) detail.push(`tools=${request.tools.length}`);
  return detail;
}

function resultDetail(record: ModelResultRecord): string[] {
  const detail = [`outcome=${record.outcome}`];
  if (record.stopReason !== undefined) detail.push(`stop=${record.stopReason}`);
  if (record.error !== undefined) detail.push(`code=${record.error.code}`);
  if (record.usage !== undefined)
    detail.push(`tokens=${record.usage.inputTokens}+${record.usage.outputTokens}`);
  if (record.costMinor !== undefined) detail.push(`cost=${record.costMinor}`);
  detail.push(`duration=${record.durationMs}ms`);
  if (record.text !== undefined) detail.push(`textBytes=${Buffer.byteLength(record.text)}`);
  if (record.toolCalls !== undefined && record.toolCalls.length > 0)
    detail.push(`toolCalls=${record.toolCalls.map((call) => call.name).join(',')}`);
  return detail;
}

function requestContent(record: ModelRequestRecord): string[] {
  return record.request.messages.map((message) => `${message.role}: ${messageText(message)}`);
}

function resultContent(record: ModelResultRecord): string[] {
  const lines: string[] = [];
  if (record.text !== undefined) lines.push(`text: ${oneLine(record.text)}`);
  for (const call of record.toolCalls ?? []) lines.push(`tool ${call.name}: ${oneLine(call.arguments)}`);
  if (record.error !== undefined) lines.push(`error: ${oneLine(record.error.message)}`);
  return lines;
}

function messageText(message: ChatMessage): string {
  if (typeof message.content === 'string') return oneLine(message.content);
  if (message.content === null)
    return message.toolCalls?.map((call) => `[tool ${call.name}]`).join(' ') ?? '';
  return oneLine(JSON.stringify(message.content));
}

/** Text on one line: newlines escaped, so that every record stays one block of lines. */
function oneLine(text: string): string {
  return text.replace(/\r?\n/g, '\\n');
}
