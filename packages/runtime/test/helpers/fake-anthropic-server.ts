import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedRequest } from './fake-openai-server.js';
import { checkMessagesBody } from './messages-body-check.js';

/** How the fake server answers one Messages request. Every field is optional. */
export interface FakeMessagesReply {
  /** Answer text; default `chunks` joined, else `Hello from the fake Anthropic server`. */
  text?: string;
  /** Stream text deltas; default `text` split after each word. */
  chunks?: readonly string[];
  /** Default `end_turn`, or `tool_use` when there are tool calls. */
  stopReason?: string | null;
  /** Default: words of the messages and of the answer. */
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number };
  /** An HTTP error status answered with an Anthropic error body. */
  status?: number;
  /** That body's `error`; default `{type: "api_error", message: "fake error <status>"}`. */
  error?: { type?: string; message?: string };
  /** Stream: after the text, an `error` event with this type instead of the message's end. */
  streamErrorType?: string;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** Never answer; the connection stays open until the client goes or the server closes. */
  hang?: boolean;
  /** Stream: send this many text deltas, then hang. */
  hangAfterChunks?: number;
  /** Stream: end the body after this many text deltas without `message_stop`. */
  cutAfterChunks?: number;
  /** Wait this long between stream events. */
  chunkDelayMs?: number;
  /** `tool_use` blocks after the text; streamed as `input_json_delta` pieces. */
  toolCalls?: readonly { id?: string; name: string; arguments: string; argumentChunks?: number }[];
}

export type FakeMessagesReplySource = FakeMessagesReply | ((request: RecordedRequest) => FakeMessagesReply);

/** A running fake Messages API; `baseURL` has no `/v1`, like the real one's. */
export interface FakeAnthropicServer {
  baseURL: string;
  readonly requests: RecordedRequest[];
  readonly requestCount: number;
  /** Responses still open: a cancelled call's connection is closed, so this drops. */
  readonly openResponses: number;
  reply(source: FakeMessagesReplySource): void;
  /** Closes every connection and stops listening; idempotent. */
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 speaking the Messages API: `POST /v1/messages` answered with a
 * message, or with the SSE events `message_start`, `content_block_start`, `content_block_delta`
 * (`text_delta`, `input_json_delta`), `content_block_stop`, `message_delta`, `message_stop`.
 * A body the real API would refuse (roles not alternating, `system` in the messages, an empty
 * text block, a `tool_result` not answering the turn before) is answered 400 the same way.
 */
export async function startFakeAnthropicServer(
  options: { reply?: FakeMessagesReplySource } = {},
): Promise<FakeAnthropicServer> {
  let source: FakeMessagesReplySource = options.reply ?? {};
  let requestCount = 0;
  let openResponses = 0;
  let nextId = 1;
  const requests: RecordedRequest[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path !== '/v1/messages') return sendError(res, 404, { type: 'not_found_error', message: path });
    const raw = await readBody(req);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, { type: 'invalid_request_error', message: 'body is not JSON' });
    }
    const recorded: RecordedRequest = { method: req.method ?? '', path, headers: req.headers, body, raw };
    requestCount++;
    requests.push(recorded);
    const refusal = checkMessagesBody(body);
    if (refusal !== undefined)
      return sendError(res, 400, { type: 'invalid_request_error', message: refusal });
    const reply = typeof source === 'function' ? source(recorded) : source;
    if (reply.hang) return;
    if (reply.status !== undefined) return sendError(res, reply.status, reply.error ?? {}, reply.headers);
    const answer = new Answer(reply, body, `msg_fake_${nextId++}`);
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(answer.message()));
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    await answer.stream(res);
  };

  const server = createServer((req, res) => {
    openResponses++;
    res.once('close', () => openResponses--);
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    get requestCount() {
      return requestCount;
    },
    get openResponses() {
      return openResponses;
    },
    reply(next) {
      source = next;
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** One scripted answer, whole or as events. */
class Answer {
  private readonly text: string;
  private readonly tools: { id: string; name: string; arguments: string; pieces: string[] }[];
  private readonly stopReason: string | null;
  private readonly usage: NonNullable<FakeMessagesReply['usage']>;
  private readonly model: string;

  constructor(
    private readonly reply: FakeMessagesReply,
    body: Record<string, unknown>,
    private readonly id: string,
  ) {
    this.tools = (reply.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `toolu_${i}`,
      name: call.name,
      arguments: call.arguments,
      pieces: splitInto(call.arguments, call.argumentChunks ?? 3),
    }));
    this.text =
      reply.text ??
      reply.chunks?.join('') ??
      (this.tools.length > 0 ? '' : 'Hello from the fake Anthropic server');
    this.stopReason =
      reply.stopReason === undefined ? (this.tools.length > 0 ? 'tool_use' : 'end_turn') : reply.stopReason;
    this.usage = reply.usage ?? { input_tokens: promptWords(body), output_tokens: words(this.text) };
    this.model = typeof body.model === 'string' ? body.model : 'fake';
  }

  message(): Record<string, unknown> {
    const content: unknown[] = this.text === '' ? [] : [{ type: 'text', text: this.text }];
    for (const tool of this.tools)
      content.push({ type: 'tool_use', id: tool.id, name: tool.name, input: JSON.parse(tool.arguments) });
    return { ...this.head(), content, stop_reason: this.stopReason, stop_sequence: null, usage: this.usage };
  }

  async stream(res: ServerResponse): Promise<void> {
    const { reply } = this;
    const send = async (type: string, data: Record<string, unknown>): Promise<boolean> => {
      if (reply.chunkDelayMs !== undefined && !(await pause(reply.chunkDelayMs, res))) return false;
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      return true;
    };
    const usage = { ...this.usage, output_tokens: 1 };
    await send('message_start', { message: { ...this.head(), content: [], stop_reason: null, usage } });
    res.write('event: ping\ndata: {"type": "ping"}\n\n');
    const chunks = reply.chunks ?? splitWords(this.text);
    let block = 0;
    if (chunks.length > 0) {
      await send('content_block_start', { index: block, content_block: { type: 'text', text: '' } });
      for (let i = 0; i < chunks.length; i++) {
        if (reply.hangAfterChunks === i) return;
        if (reply.cutAfterChunks === i) return void res.end();
        if (
          !(await send('content_block_delta', {
            index: block,
            delta: { type: 'text_delta', text: chunks[i] },
          }))
        )
          return;
      }
      await send('content_block_stop', { index: block++ });
    }
    if (reply.streamErrorType !== undefined) {
      await send('error', { error: { type: reply.streamErrorType, message: 'fake stream error' } });
      return void res.end();
    }
    for (const tool of this.tools) {
      const start = { type: 'tool_use', id: tool.id, name: tool.name, input: {} };
      await send('content_block_start', { index: block, content_block: start });
      for (const piece of tool.pieces)
        await send('content_block_delta', {
          index: block,
          delta: { type: 'input_json_delta', partial_json: piece },
        });
      await send('content_block_stop', { index: block++ });
    }
    const end = { stop_reason: this.stopReason, stop_sequence: null };
    await send('message_delta', { delta: end, usage: { output_tokens: this.usage.output_tokens } });
    await send('message_stop', {});
    res.end();
  }

  private head(): Record<string, unknown> {
    return { id: this.id, type: 'message', role: 'assistant', model: this.model };
  }
}

function sendError(
  res: ServerResponse,
  status: number,
  error: NonNullable<FakeMessagesReply['error']>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  const inner = { type: error.type ?? 'api_error', message: error.message ?? `fake error ${status}` };
  res.end(JSON.stringify({ type: 'error', error: inner }));
}

/** Resolves true after `ms`, or false as soon as the client closed the response. */
function pause(ms: number, res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(true);
    }, ms);
    res.once('close', onClose);
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req as AsyncIterable<Buffer>) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function promptWords(body: Record<string, unknown>): number {
  const messages = Array.isArray(body.messages) ? (body.messages as { content?: unknown }[]) : [];
  let count = typeof body.system === 'string' ? words(body.system) : 0;
  for (const message of messages)
    for (const block of Array.isArray(message.content) ? (message.content as { text?: unknown }[]) : [])
      if (typeof block.text === 'string') count += words(block.text);
  return count;
}

function splitInto(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, count)));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
}
