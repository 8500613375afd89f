import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake server answers one chat-completions request. Every field is optional. */
export interface FakeReply {
  /** Answer text; default `Hello from the fake server`. */
  text?: string;
  /** Stream deltas; default `text` split after each word. */
  chunks?: readonly string[];
  /** Default `stop`; `length` simulates truncation. */
  finishReason?: string | null;
  /** Default counts words of the messages and of the answer; `null` sends no usage at all. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** An HTTP error status (429, 500, 400, …) answered with an OpenAI-style error body. */
  status?: number;
  /** Fields of that error body; default message `fake error <status>`. */
  error?: { message?: string; type?: string; code?: string | null };
  /** Wait this long before sending the response head. */
  delayMs?: number;
  /** Never answer; the connection stays open until the client aborts or the server closes. */
  hang?: boolean;
  /** Wait this long between stream chunks. */
  chunkDelayMs?: number;
  /** Stream: send this many content chunks, then hang. */
  hangAfterChunks?: number;
  /**
   * Tool calls the model makes. Answered whole in `message.tool_calls`, and streamed as
   * `delta.tool_calls` fragments (id, type and name in the first, arguments split in pieces).
   * `finishReason` defaults to `tool_calls` when present; `text` defaults to none.
   */
  toolCalls?: readonly FakeToolCall[];
  /** Top-level fields added to the completion and to every stream chunk (unknown fields). */
  extra?: Record<string, unknown>;
  /** Extra response headers (e.g. `retry-after` on an error). */
  headers?: Record<string, string>;
}

/** One tool call of a fake reply. */
export interface FakeToolCall {
  /** Default `call_<n>` (n from 0 within the reply). */
  id?: string;
  name: string;
  /** The JSON arguments as text, sent verbatim. */
  arguments: string;
  /** Streamed: the arguments split into this many fragments; default 3. */
  argumentChunks?: number;
}

/** A fixed reply, or one computed per request (e.g. from `body.messages`). */
export type FakeReplySource = FakeReply | ((request: RecordedRequest) => FakeReply);

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  /** The body's text as it arrived. */
  raw: string;
}

export interface FakeOpenAIServerOptions {
  reply?: FakeReplySource;
  /** Requests kept in `requests`; later ones are only counted. Default 1000. */
  maxRecordedRequests?: number;
  /** Larger bodies are answered 413. Default 16 MiB. */
  maxBodyBytes?: number;
}

/** A running fake server; `baseURL` ends in `/v1` like the real API. */
export interface FakeOpenAIServer {
  baseURL: string;
  /** The first `maxRecordedRequests` chat-completions requests, in arrival order. */
  readonly requests: RecordedRequest[];
  /** All chat-completions requests received, recorded or not. */
  readonly requestCount: number;
  /** Responses still open: a cancelled call's connection is closed, so this drops. */
  readonly openResponses: number;
  /** Replaces the reply used for the following requests. */
  reply(source: FakeReplySource): void;
  /** Closes every connection (hung ones included) and stops listening; idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a real HTTP server on 127.0.0.1 (random port) speaking the chat-completions wire
 * format — JSON and SSE — so provider, daemon and benchmark tests exercise the real client.
 */
export async function startFakeOpenAIServer(
  options: FakeOpenAIServerOptions = {},
): Promise<FakeOpenAIServer> {
  const maxRecorded = options.maxRecordedRequests ?? 1000;
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
  let source: FakeReplySource = options.reply ?? {};
  let requestCount = 0;
  let openResponses = 0;
  let nextId = 1;
  const requests: RecordedRequest[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();

  const pause = (ms: number, res: ServerResponse): Promise<boolean> =>
    new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        timers.delete(timer);
        res.off('close', onClose);
        resolve(ok);
      };
      const onClose = (): void => done(false);
      const timer = setTimeout(() => done(true), ms);
      timers.add(timer);
      res.once('close', onClose);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path !== '/v1/chat/completions' && path !== '/chat/completions') {
      return sendError(res, 404, { message: `no route ${path}`, type: 'invalid_request_error' });
    }
    if (req.method !== 'POST')
      return sendError(res, 405, { message: 'use POST', type: 'invalid_request_error' });
    const raw = await readBody(req, maxBodyBytes);
    if (raw === undefined)
      return sendError(res, 413, { message: 'body too large', type: 'invalid_request_error' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, { message: 'body is not JSON', type: 'invalid_request_error' });
    }
    const recorded: RecordedRequest = { method: req.method, path, headers: req.headers, body, raw };
    requestCount++;
    if (requests.length < maxRecorded) requests.push(recorded);

    const reply = typeof source === 'function' ? source(recorded) : source;
    if (reply.hang) return;
    if (reply.delayMs !== undefined && !(await pause(reply.delayMs, res))) return;
    if (reply.status !== undefined && reply.status >= 400)
      return sendError(res, reply.status, reply.error ?? {}, reply.headers);

    const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_${i}`,
      type: 'function' as const,
      function: { name: call.name, arguments: call.arguments },
      pieces: splitInto(call.arguments, call.argumentChunks ?? 3),
    }));
    const text = reply.text ?? (toolCalls.length > 0 ? '' : 'Hello from the fake server');
    const finishReason =
      reply.finishReason === undefined ? (toolCalls.length > 0 ? 'tool_calls' : 'stop') : reply.finishReason;
    const extra = reply.extra ?? {};
    const usage =
      reply.usage === null
        ? undefined
        : (reply.usage ?? { prompt_tokens: promptWords(body), completion_tokens: words(text) });
    const base = {
      id: `chatcmpl-fake-${nextId++}`,
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'fake',
    };
    const withUsage = usage && { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };

    if (body.stream !== true) {
      const message = {
        role: 'assistant',
        content: toolCalls.length > 0 && text === '' ? null : text,
        refusal: null,
        ...(toolCalls.length > 0
          ? { tool_calls: toolCalls.map(({ id, type, function: fn }) => ({ id, type, function: fn })) }
          : {}),
      };
      res.writeHead(200, { 'content-type': 'application/json', ...reply.headers });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
          ...(withUsage ? { usage: withUsage } : {}),
          ...extra,
        }),
      );
      return;
    }

    const includeUsage =
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const send = (choices: unknown[], fields: Record<string, unknown> = {}): void => {
      const chunk = {
        ...base,
        object: 'chat.completion.chunk',
        choices,
        ...(includeUsage ? { usage: null } : {}),
        ...extra,
      };
      res.write(`data: ${JSON.stringify({ ...chunk, ...fields })}\n\n`);
    };
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    const chunks = reply.chunks ?? splitWords(text);
    for (let i = 0; i < chunks.length; i++) {
      if (reply.hangAfterChunks === i) return;
      if (i > 0 && reply.chunkDelayMs !== undefined && !(await pause(reply.chunkDelayMs, res))) return;
      send([{ index: 0, delta: { content: chunks[i] }, finish_reason: null }]);
    }
    if (reply.hangAfterChunks !== undefined && reply.hangAfterChunks >= chunks.length) return;
    for (const [index, call] of toolCalls.entries()) {
      const first = {
        index,
        id: call.id,
        type: call.type,
        function: { name: call.function.name, arguments: '' },
      };
      send([{ index: 0, delta: { tool_calls: [first] }, finish_reason: null }]);
      for (const piece of call.pieces) {
        if (reply.chunkDelayMs !== undefined && !(await pause(reply.chunkDelayMs, res))) return;
        const fragment = { index, function: { arguments: piece } };
        send([{ index: 0, delta: { tool_calls: [fragment] }, finish_reason: null }]);
      }
    }
    send([{ index: 0, delta: {}, finish_reason: finishReason }]);
    if (includeUsage && withUsage) send([], { usage: withUsage });
    res.end('data: [DONE]\n\n');
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
    baseURL: `http://127.0.0.1:${port}/v1`,
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
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Alias of {@link startFakeOpenAIServer}. */
export { startFakeOpenAIServer as start };

function sendError(
  res: ServerResponse,
  status: number,
  error: NonNullable<FakeReply['error']>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(
    JSON.stringify({
      error: {
        message: error.message ?? `fake error ${status}`,
        type: error.type ?? 'fake_error',
        param: null,
        code: error.code ?? null,
      },
    }),
  );
}

/** The body as text, or undefined when it exceeds `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limit) return undefined;
    parts.push(part);
  }
  return Buffer.concat(parts).toString('utf8');
}

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function promptWords(body: Record<string, unknown>): number {
  const messages = Array.isArray(body.messages) ? (body.messages as { content?: unknown }[]) : [];
  return messages.reduce((sum, m) => sum + (typeof m.content === 'string' ? words(m.content) : 0), 0);
}

/** `text` cut into `count` pieces of near-equal length (fewer when it is shorter). */
function splitInto(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, count)));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
}
