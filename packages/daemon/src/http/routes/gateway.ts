import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type CallOptions, type Journal, type ModelRuntime, type TaskBudget } from '@sluice/runtime';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ChunkWriter,
  DONE_FRAME,
  completionBody,
  frame,
  openAIError,
  promptCalls,
  readChatRequest,
  type ChatRequest,
  type CompletionHead,
  type GatewayCaller,
} from '../../gateway/index.js';
import { BUDGET_HEADER, gatewayCallBudget, type DurableBudgets } from '../../budgets/index.js';
import { HttpError } from '../../wire/index.js';
import { gatewayCallerOf } from '../security.js';

/** What the model gateway routes use. */
export interface GatewayDeps {
  runtime: ModelRuntime;
  journal: Journal;
  /** Durable budgets a call is charged to (`X-Sluice-Budget`, or its turn's `budgetId`). */
  budgets?: DurableBudgets;
}

/**
 * The OpenAI-compatible model gateway (`/v1/chat/completions`, `/v1/models`): every call goes
 * through the model runtime (admission, deadline, journal, budgets, snapshot), attributed to the
 * session whose credential it carries. Errors answer in OpenAI's shape, from the one error table.
 * Also lists a prompt's model calls from the journal.
 */
export function gatewayRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const errorHandler = (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void => {
    const answer = openAIError(error);
    void reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  };
  const { runtime } = deps;

  app.get('/v1/models', { errorHandler }, () => {
    const { provider } = runtime;
    const names = [provider.defaultModel, ...(provider.models ?? [])];
    const data = [...new Set(names)].map((id) => ({
      id,
      object: 'model',
      created: 0,
      owned_by: provider.name,
    }));
    return { object: 'list', data };
  });

  app.post('/v1/chat/completions', { errorHandler }, async (request, reply) => {
    const chat = readChatRequest(request.body);
    // The security gate resolved a session credential already (a daemon token names no session).
    const caller = gatewayCallerOf(request);
    const budget = await gatewayCallBudget(request.headers[BUDGET_HEADER], caller, deps.budgets);
    const head: CompletionHead = {
      id: '',
      created: Math.floor(Date.now() / 1000),
      model: chat.model ?? runtime.provider.defaultModel,
    };
    if (chat.stream) return streamCompletion(runtime, chat, caller, budget, head, reply);
    // A client that goes away cancels its call.
    const gone = new AbortController();
    const onClose = (): void => {
      if (!reply.raw.writableFinished) gone.abort();
    };
    reply.raw.once('close', onClose);
    try {
      const options = callOptions(chat, caller, budget, gone.signal);
      const response = await runtime.complete(chat.request, options);
      head.id = `chatcmpl-${globalThis.crypto.randomUUID()}`;
      return completionBody(response, head);
    } finally {
      reply.raw.off('close', onClose);
    }
  });

  app.get<{ Params: { id: string; promptId: string } }>(
    '/session/:id/prompts/:promptId/calls',
    async (request) => {
      const read = deps.journal.recordsForSession?.bind(deps.journal);
      if (read === undefined)
        throw new HttpError(501, 'journal_not_readable', 'This daemon journal cannot be read back');
      const records = await read(request.params.id);
      return { calls: promptCalls(records, request.params.promptId) };
    },
  );
}

function callOptions(
  chat: ChatRequest,
  caller: GatewayCaller | undefined,
  budget: TaskBudget | undefined,
  gone: AbortSignal,
): CallOptions {
  const options: CallOptions = {
    signal: caller?.signal === undefined ? gone : AbortSignal.any([gone, caller.signal]),
  };
  if (budget !== undefined) options.budget = budget;
  if (chat.model !== undefined) options.model = chat.model;
  if (caller !== undefined) {
    options.sessionId = caller.sessionId;
    // A call for a running turn (an external agent's, by its session credential) waits for room
    // as the built-in agent's calls do, within the turn's life: the prompt was accepted, so its
    // calls should run rather than fail late. Any other caller gets the refusal at once — `429`
    // with `Retry-After`, as an OpenAI client expects (docs/decisions/029).
    if (caller.promptId !== undefined) {
      options.turnId = caller.promptId;
      options.waitForCapacity = true;
    }
  }
  return options;
}

/**
 * Streams a call as SSE. The first event is awaited before the head is sent, so an upstream
 * that refuses the call still answers with its own status; later failures end the stream with
 * an error frame. A client that disconnects cancels the call.
 */
async function streamCompletion(
  runtime: ModelRuntime,
  chat: ChatRequest,
  caller: GatewayCaller | undefined,
  budget: TaskBudget | undefined,
  head: CompletionHead,
  reply: FastifyReply,
): Promise<void> {
  const raw = reply.raw;
  const gone = new AbortController();
  let finished = false;
  const onClose = (): void => {
    if (!finished) gone.abort();
  };
  raw.once('close', onClose);
  try {
    const options = callOptions(chat, caller, budget, gone.signal);
    const stream = runtime.stream(chat.request, options);
    const events = stream[Symbol.asyncIterator]();
    let step = await events.next();
    head.id = `chatcmpl-${stream.callId}`;
    void reply.hijack();
    raw.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const writer = new ChunkWriter(head, chat.includeUsage);
    try {
      for (; !step.done; step = await events.next()) {
        const frames = writer.frames(step.value);
        if (frames !== '' && !raw.write(frames)) await drained(raw);
      }
      raw.end(DONE_FRAME);
    } catch (error) {
      if (!raw.destroyed) raw.end(frame(openAIError(error).body));
    }
  } finally {
    finished = true;
    raw.off('close', onClose);
  }
}

/** Resolves once `response` can take more, or has closed. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}
