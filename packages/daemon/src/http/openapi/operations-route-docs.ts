import * as z from 'zod/mini';
import { ErrorBody } from '../schemas/common-schemas.js';
import { BudgetBody, BudgetParams, BudgetState } from '../schemas/budget-schemas.js';
import { PromptParams } from '../schemas/prompt-schemas.js';
import { OverviewQuery, SessionSummary } from '../schemas/session-schemas.js';
import { badInput, type RouteDoc } from './route-doc.js';

/** A prompt's run report: its model calls and their totals, from the journal (no prompt text). */
const RunReport = z.looseObject({
  promptId: z.string(),
  sessionId: z.string(),
  calls: z.array(z.looseObject({ callId: z.string(), outcome: z.string() })),
  totals: z.looseObject({ calls: z.number(), inputTokens: z.number(), outputTokens: z.number() }),
});

const text = (description: string, contentType: string) => ({
  description,
  schema: z.string(),
  contentType,
});

/** Durable budgets, run reports and the operator's overview (issue 20, 21). */
export const OPERATIONS_ROUTES: readonly RouteDoc[] = [
  {
    method: 'POST',
    path: '/budgets',
    tag: 'operations',
    summary: 'Create a durable task budget',
    description:
      "Its spend is the journal's calls with its id as task id, so it survives a restart. Attach a prompt with `budgetId`, a gateway call with `X-Sluice-Budget`.",
    body: { schema: BudgetBody, required: false },
    responses: {
      201: { description: 'Created, with what it spent so far (nothing).', schema: BudgetState },
      400: badInput(['invalid_budget', 'invalid_body']),
      409: { description: '`budget_exists` or `budget_limit_reached`.', schema: ErrorBody },
    },
  },
  {
    method: 'GET',
    path: '/budgets/:id',
    tag: 'operations',
    summary: "A durable budget's limits and spend",
    params: BudgetParams,
    responses: {
      200: {
        description: 'Its limits, spend and `stoppedReason` once it refuses calls.',
        schema: BudgetState,
      },
      400: badInput(['invalid_budget']),
      404: { description: '`budget_not_found`.', schema: ErrorBody },
    },
  },
  {
    method: 'GET',
    path: '/session/:id/prompts/:promptId/report',
    tag: 'operations',
    summary: "A prompt's run report: calls, tokens, cost, time per phase",
    params: PromptParams,
    responses: {
      200: { description: 'The report, from the journal.', schema: RunReport },
      404: { description: '`prompt_not_found`.', schema: ErrorBody },
    },
  },
  {
    method: 'GET',
    path: '/daemon/sessions',
    tag: 'operations',
    summary: 'The live sessions of every workspace, with the daemon’s totals',
    query: OverviewQuery,
    responses: {
      200: {
        description: '`{draining, sessionCount, pendingPromptTotal, sessions, truncated}`.',
        schema: z.looseObject({
          draining: z.boolean(),
          sessionCount: z.number(),
          pendingPromptTotal: z.number(),
          sessions: z.array(SessionSummary),
          truncated: z.boolean(),
        }),
      },
      400: badInput(['invalid_size']),
    },
  },
];

/** The operator's view: served unless the daemon runs with `--no-metrics`. */
export const METRICS_ROUTES: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: '/metrics',
    tag: 'operations',
    summary: 'Prometheus metrics (text exposition format)',
    responses: { 200: text('The metrics; docs/metrics.md lists them.', 'text/plain') },
  },
  {
    method: 'GET',
    path: '/dashboard',
    tag: 'operations',
    summary: 'The live dashboard page',
    description:
      'Also accepts `?token=` (sets an HttpOnly cookie and redirects), since a browser cannot send a bearer header on an EventSource.',
    responses: {
      200: text('The page.', 'text/html'),
      401: text('A sign-in form, when a token is needed.', 'text/html'),
    },
  },
  {
    method: 'GET',
    path: '/dashboard/stream',
    tag: 'operations',
    summary: "The dashboard's feed: one snapshot a second",
    responses: { 200: text('Server-sent events, one snapshot each.', 'text/event-stream') },
  },
];
