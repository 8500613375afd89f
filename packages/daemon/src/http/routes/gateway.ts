import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type CallOptions, type CatalogueModel, type ModelCatalogue, type TaskBudget } from '@sluice/runtime';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { CodedError, clipText } from '@sluice/protocol';
import {
  ChunkWriter,
  DONE_FRAME,
  completionBody,
  frame,
  openAIError,
  readChatRequest,
  type ChatRequest,
  type CompletionHead,
  type GatewayCaller,
} from '../../gateway/index.js';
import { BUDGET_HEADER, gatewayCallBudget } from '../../budgets/index.js';
import { gatewayCallerOf } from '../security.js';
import { defineRoute, type Route, type RouteParts } from '../route.js';
import { logIfInternal, type FailureLog } from '../internal-error.js';
import { OpenAIErrorBody } from '../schemas/common-schemas.js';
import {
  ChatCompletion,
  ChatCompletionChunks,
  ChatCompletionRequest,
  ModelList,
} from '../schemas/gateway-schemas.js';
import { PROMPT_CALLS_ROUTE } from './prompt-calls.js';

const openAIErrorDoc = (description: string) => ({ description, schema: OpenAIErrorBody });

/** Errors answer in OpenAI's shape, from the one error table. */
function errorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer = openAIError(error);
  void reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
}

const models = defineRoute(
  {
    method: 'GET',
    path: '/v1/models',
    tag: 'gateway',
    rateLimit: 'exempt',
    summary: 'The model catalogue: each model and alias a chat request may name (OpenAI wire)',
    description:
      'Every model and alias of `--model`/the config file, with the provider that serves it (`owned_by`); what OpenAI clients list before they pick a `model`. Never rate limited.',
    responses: {
      200: {
        description: 'The model list.',
        schema: ModelList,
        example: { object: 'list', data: [{ id: 'echo-1', object: 'model', created: 0, owned_by: 'echo' }] },
      },
    },
  },
  {
    errorHandler,
    handler:
      ({ models }) =>
      () => {
        const data = models.names().map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: models.get(id).runtime.providerName,
        }));
        return { object: 'list', data };
      },
  },
);

/** A chat completion through the model runtime, JSON or streamed. */
function completion({ models, budgets, log }: RouteParts) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const type = request.headers['content-type'];
    if (type !== undefined && !/^application\/json\s*(;|$)/i.test(type))
      throw new CodedError(
        'unsupported_media_type',
        'POST /v1/chat/completions takes Content-Type: application/json',
      );
    const chat = readChatRequest(request.body);
    // An unknown model is OpenAI's 404 before anything else is looked at.
    const named = models.get(chat.model);
    // The security gate resolved a session credential already (a daemon token names no session).
    const caller = gatewayCallerOf(request);
    const model = sessionModel(models, named, caller);
    chat.model = model.name;
    const budget = await gatewayCallBudget(request.headers[BUDGET_HEADER], caller, budgets);
    const head: CompletionHead = { id: '', created: Math.floor(Date.now() / 1000), model: model.name };
    if (chat.stream) return streamCompletion(models, chat, { caller, budget, log }, head, reply);
    // A client that goes away cancels its call.
    const gone = new AbortController();
    const onClose = (): void => {
      if (!reply.raw.writableFinished) gone.abort();
    };
    reply.raw.once('close', onClose);
    try {
      const options = callOptions(chat, caller, budget, gone.signal);
      const answer = await models.complete(chat.model, chat.request, options);
      head.id = `chatcmpl-${globalThis.crypto.randomUUID()}`;
      head.model = answer.model;
      return completionBody(answer.response, head);
    } finally {
      reply.raw.off('close', onClose);
    }
  };
}

const chatCompletions = defineRoute(
  {
    method: 'POST',
    path: '/v1/chat/completions',
    tag: 'gateway',
    rateLimit: 'exempt',
    summary: 'A chat completion through the model runtime (OpenAI wire)',
    description:
      'Admission, one deadline, the journal and the snapshot of the model runtime. Takes the daemon ' +
      'token or a live per-session credential (`sluice-sess-…`), which attributes the call to its ' +
      "session and may name (`X-Sluice-Budget`) only budgets its session's prompts were sent with. " +
      'Tools, tool calls, content parts and unknown fields pass through unchanged.',
    body: {
      schema: ChatCompletionRequest,
      required: true,
      example: { model: 'echo-1', messages: [{ role: 'user', content: 'Say hello.' }] },
    },
    responses: {
      200: {
        description: 'The completion; with `"stream": true`, server-sent chunks instead.',
        schema: ChatCompletion,
        example: {
          id: 'chatcmpl-01a23ca1',
          object: 'chat.completion',
          created: 1796313547,
          model: 'echo-1',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'Say hello.' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
        },
        stream: ChatCompletionChunks,
      },
      400: openAIErrorDoc('`invalid_chat_request`: the body is not a chat request.'),
      404: openAIErrorDoc(
        '`model_not_found`: no model or alias of the catalogue has that name (`GET /v1/models`).',
      ),
      403: openAIErrorDoc(
        "`budget_forbidden`: a session credential's `X-Sluice-Budget` names a budget none of its session's prompts was sent with.",
      ),
      413: openAIErrorDoc('The request is larger than the runtime admits.'),
      415: openAIErrorDoc('`unsupported_media_type`: the body is not `application/json`.'),
      429: openAIErrorDoc('The model runtime is full; retry after `Retry-After` seconds.'),
      502: openAIErrorDoc('The provider failed; its own status and message when it gave one.'),
    },
  },
  { errorHandler, handler: completion, jsonSource: true },
);

/**
 * The gateway's answer to a `/v1` path no route serves, in OpenAI's error shape: `405
 * method_not_allowed` when another method serves the path, else `404 route_not_found`.
 */
export function gatewayNotFound(routes: readonly Route[]) {
  return (request: FastifyRequest, reply: FastifyReply): void => {
    const path = clipText(request.url.split('?', 1)[0] ?? '');
    const methods = routes.filter((route) => route.path === path).map((route) => route.method);
    const error =
      methods.length > 0
        ? new CodedError(
            'method_not_allowed',
            `${request.method} ${path} is not served; use ${methods.join(' or ')}`,
          )
        : new CodedError('route_not_found', `${request.method} ${path} is not a route of this gateway`);
    const answer = openAIError(error);
    if (methods.length > 0) answer.headers['allow'] = methods.join(', ');
    void reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  };
}

/** Whether `url` is the model gateway's (`/v1`, `/v1/…`): its errors answer in OpenAI's shape. */
export function isGatewayUrl(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');
}

/**
 * The OpenAI-compatible model gateway (`/v1/chat/completions`, `/v1/models`): every call goes
 * through the model runtime (admission, deadline, journal, budgets, snapshot), attributed to the
 * session whose credential it carries. Errors answer in OpenAI's shape, from the one error table.
 * Also lists a prompt's model calls from the journal.
 */
export const GATEWAY_ROUTES: readonly Route[] = [models, chatCompletions, PROMPT_CALLS_ROUTE];

/**
 * The model a call goes to: the one it names, except that a session's call naming the model its
 * agent process was given (`OPENAI_MODEL`, the catalogue's default) goes to the session's own
 * model — an agent that could not be switched per session (qwen 0.24.4 refuses a model its
 * settings do not list) still runs each session on its model (docs/decisions/037).
 */
function sessionModel(
  models: ModelCatalogue,
  named: CatalogueModel,
  caller: GatewayCaller | undefined,
): CatalogueModel {
  const own = caller?.model;
  if (own === undefined || named !== models.defaultModel) return named;
  return models.get(own);
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

/** Who a streamed call is for and where its internal failures are logged. */
interface StreamContext {
  caller: GatewayCaller | undefined;
  budget: TaskBudget | undefined;
  log: FailureLog | undefined;
}

/**
 * Streams a call as SSE. The first event is awaited before the head is sent, so an upstream
 * that refuses the call still answers with its own status; later failures end the stream with
 * an error frame. A client that disconnects cancels the call.
 */
async function streamCompletion(
  models: ModelCatalogue,
  chat: ChatRequest,
  { caller, budget, log }: StreamContext,
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
    const stream = models.stream(chat.model, chat.request, options);
    const events = stream[Symbol.asyncIterator]();
    let step = await events.next();
    head.id = `chatcmpl-${stream.callId}`;
    head.model = stream.model;
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
      // The head is sent, so the server's error hook never sees this one: log it here.
      logIfInternal(log, reply.request, error);
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
