import * as z from 'zod/mini';
import { AcpConnectionIdHeader, AcpSessionIdHeader, JsonRpcMessage } from '../schemas/acp-schemas.js';
import { ErrorBody, OpenAIErrorBody } from '../schemas/common-schemas.js';
import { Capabilities, Health, SchedulerSnapshot } from '../schemas/discovery-schemas.js';
import { EventsQuery, LastEventIdHeader } from '../schemas/event-schemas.js';
import {
  ChatCompletion,
  ChatCompletionChunks,
  ChatCompletionRequest,
  ModelList,
  PromptCalls,
} from '../schemas/gateway-schemas.js';
import { PromptParams } from '../schemas/prompt-schemas.js';
import type { RouteDoc } from './route-doc.js';

const openAIError = (description: string) => ({ description, schema: OpenAIErrorBody });

/** The OpenAPI document itself, loosely: its own schema is the OpenAPI 3.1 specification. */
const OpenApiDocument = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({}),
  paths: z.looseObject({}),
});

/** Discovery (PROTOCOL §3), the API document, the model gateway and ACP over HTTP (§8). */
export const OTHER_ROUTES: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: '/health',
    tag: 'discovery',
    summary: 'Liveness',
    openOnLoopback: true,
    responses: { 200: { description: 'Serving.', schema: Health } },
  },
  {
    method: 'GET',
    path: '/capabilities',
    tag: 'discovery',
    summary: 'What this daemon implements, its transports and limits',
    responses: { 200: { description: 'The capabilities.', schema: Capabilities } },
  },
  {
    method: 'GET',
    path: '/runtime/snapshot',
    tag: 'discovery',
    summary: "The model scheduler's state, live",
    responses: { 200: { description: 'The snapshot.', schema: SchedulerSnapshot } },
  },
  {
    method: 'GET',
    path: '/openapi.json',
    tag: 'discovery',
    summary: 'This document',
    description: 'Generated from the schemas the routes validate with; built on the first request.',
    responses: { 200: { description: 'An OpenAPI 3.1 document.', schema: OpenApiDocument } },
  },
  {
    method: 'GET',
    path: '/v1/models',
    tag: 'gateway',
    summary: 'The models of the configured provider (OpenAI wire)',
    responses: { 200: { description: 'The model list.', schema: ModelList } },
  },
  {
    method: 'POST',
    path: '/v1/chat/completions',
    tag: 'gateway',
    summary: 'A chat completion through the model runtime (OpenAI wire)',
    description:
      'Admission, one deadline, the journal and the snapshot of the model runtime. Takes the daemon ' +
      'token or a live per-session credential (`sluice-sess-…`), which attributes the call to its ' +
      'session. Tools, tool calls, content parts and unknown fields pass through unchanged.',
    body: { schema: ChatCompletionRequest, required: true },
    responses: {
      200: {
        description: 'The completion; with `"stream": true`, server-sent chunks instead.',
        schema: ChatCompletion,
        stream: ChatCompletionChunks,
      },
      400: openAIError('`invalid_chat_request`: the body is not a chat request.'),
      413: openAIError('The request is larger than the runtime admits.'),
      429: openAIError('The model runtime is full; retry after `Retry-After` seconds.'),
      502: openAIError('The provider failed; its own status and message when it gave one.'),
    },
  },
  {
    method: 'GET',
    path: '/session/:id/prompts/:promptId/calls',
    tag: 'gateway',
    summary: "A prompt's model calls, from the journal (no prompt text)",
    params: PromptParams,
    responses: {
      200: { description: 'In admission order.', schema: PromptCalls },
      501: { description: '`journal_not_readable`: this journal cannot be read back.', schema: ErrorBody },
    },
  },
  {
    method: 'POST',
    path: '/acp',
    tag: 'acp',
    summary: 'Send one ACP JSON-RPC message',
    description:
      '`initialize` is answered inline with an `Acp-Connection-Id` header; every other message ' +
      'needs that header and is answered `202`, its response arriving on the connection stream.',
    headers: {
      'Acp-Connection-Id': { schema: AcpConnectionIdHeader },
      'Acp-Session-Id': { schema: AcpSessionIdHeader },
    },
    body: { schema: JsonRpcMessage, required: true },
    responses: {
      200: { description: 'The response to `initialize`.', schema: JsonRpcMessage },
      202: { description: 'Accepted; the response comes on the stream.' },
      400: { description: 'No `Acp-Connection-Id`, or a JSON-RPC error.', schema: JsonRpcMessage },
      404: { description: 'Unknown connection.', schema: JsonRpcMessage },
      415: { description: 'Not `application/json`.' },
      501: { description: 'A batch.', schema: JsonRpcMessage },
    },
  },
  {
    method: 'GET',
    path: '/acp',
    tag: 'acp',
    summary: "An ACP connection's stream (SSE), or also a session's",
    description:
      'A server-sent event stream of JSON-RPC messages (needs `Accept: text/event-stream`, else `406`); ' +
      'with `Acp-Session-Id` also that session, replayed from `Last-Event-ID` as in PROTOCOL §6.',
    query: EventsQuery,
    headers: {
      'Acp-Connection-Id': { schema: AcpConnectionIdHeader, required: true },
      'Acp-Session-Id': { schema: AcpSessionIdHeader },
      'Last-Event-ID': { schema: LastEventIdHeader },
    },
    responses: {
      200: {
        description: 'The stream: `data: <JSON-RPC message>` frames.',
        schema: JsonRpcMessage,
        contentType: 'text/event-stream',
      },
      400: { description: 'No `Acp-Connection-Id`.', schema: JsonRpcMessage },
      404: { description: 'Unknown connection or session.', schema: JsonRpcMessage },
      406: { description: 'Not `Accept: text/event-stream`.' },
    },
  },
  {
    method: 'DELETE',
    path: '/acp',
    tag: 'acp',
    summary: 'Close an ACP connection',
    headers: { 'Acp-Connection-Id': { schema: AcpConnectionIdHeader, required: true } },
    responses: { 202: { description: 'Closed.' }, 400: { description: 'No `Acp-Connection-Id`.' } },
  },
];
