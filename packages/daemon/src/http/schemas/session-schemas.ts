import { CodedError, describeValue } from '@sluice/protocol';
import * as z from 'zod/mini';
import {
  InvalidBranchNameError,
  InvalidCwdError,
  InvalidSessionCursorError,
  InvalidSessionIdError,
  InvalidSessionScopeError,
  MAX_BRANCH_NAME_CHARS,
  MAX_SESSION_LIST_SIZE,
} from '../../sessions/index.js';
import { SessionHandleShape, StreamPosition, WireTime, absolutePath, documented } from './common-schemas.js';
import { fieldOf, type IssueExplainer } from './parse-input.js';
import type { FieldExplainer } from './request-body.js';

/** Matches a UUID in either case (the daemon stores it in lower case). */
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** `POST /session` (PROTOCOL §4), its fields in the order the route reports them. */
export const CreateSessionBody = z.looseObject({
  sessionScope: z.optional(
    documented(
      z.enum(['single', 'thread']),
      '`single` (default) joins the workspace session; `thread` creates.',
    ),
  ),
  cwd: z.optional(absolutePath('Absolute path inside a served workspace; default the primary one.')),
  sessionId: z.optional(
    z.nullable(documented(z.string().check(z.regex(UUID)), 'A caller-chosen id: creates a thread session.')),
  ),
  agent: z.optional(z.nullable(documented(z.string(), 'Name of a configured agent; default the first.'))),
  model: z.optional(
    z.nullable(
      documented(
        z.string(),
        "A model of the catalogue (`GET /v1/models`), by name or alias, the session's agent calls; default the catalogue's default.",
      ),
    ),
  ),
  modelServiceId: z.optional(
    documented(z.unknown(), 'Accepted for compatibility with `qwen serve`; ignored.'),
  ),
  approvalMode: z.optional(documented(z.unknown(), 'Accepted for compatibility with `qwen serve`; ignored.')),
});

/** Errors of `POST /session`, one stable code per field. */
export const explainCreateSession: FieldExplainer = (issue, body) => {
  switch (fieldOf(issue)) {
    case 'sessionScope':
      return new InvalidSessionScopeError(body['sessionScope']);
    case 'cwd':
      return new InvalidCwdError(body['cwd']);
    case 'sessionId':
      return new InvalidSessionIdError(body['sessionId']);
    case 'agent':
      return new CodedError('unknown_agent', `agent must be a string, got ${describeValue(body['agent'])}`);
    case 'model':
      return new CodedError('invalid_model', `model must be a string, got ${describeValue(body['model'])}`);
    default:
      return undefined;
  }
};

/** `POST /session/:id/load` and `/resume`: the workspace the caller expects the session in. */
export const RestoreSessionBody = z.looseObject({
  cwd: z.optional(absolutePath("Must name the session's workspace (`400 workspace_mismatch` otherwise).")),
});

/** Errors of `/load` and `/resume`. */
export const explainRestoreSession: FieldExplainer = (issue, body) =>
  fieldOf(issue) === 'cwd' ? new InvalidCwdError(body['cwd']) : undefined;

/** `POST /session/:id/branch` (PROTOCOL §7). */
export const BranchBody = z.looseObject({
  name: z.optional(
    z.nullable(
      documented(
        z.string().check(
          z.maxLength(MAX_BRANCH_NAME_CHARS),
          z.refine((name) => name.trim().length > 0),
        ),
        'Display name of the branch (non-blank).',
      ),
    ),
  ),
});

/** Errors of `/branch`. */
export const explainBranch: FieldExplainer = (issue, body) =>
  fieldOf(issue) === 'name' ? new InvalidBranchNameError(body['name']) : undefined;

/** `true` for `''` (the default size) or a decimal integer in [1, MAX_SESSION_LIST_SIZE]. */
function isListSize(text: string): boolean {
  if (text === '') return true;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  return Number.isSafeInteger(value) && value >= 1 && value <= MAX_SESSION_LIST_SIZE;
}

/** `GET /workspace/:cwd/sessions?size=&cursor=`. */
export const SessionListQuery = z.looseObject({
  size: z.optional(
    documented(
      z.string().check(z.refine(isListSize)),
      `Page size, an integer in [1, ${MAX_SESSION_LIST_SIZE}] (default 20).`,
      { pattern: '^[0-9]*$' },
    ),
  ),
  cursor: z.optional(documented(z.string(), 'The `nextCursor` of the previous page.')),
});

/** `GET /daemon/sessions`'s query: how many live sessions to list. */
export const OverviewQuery = z.looseObject({
  size: z.optional(
    documented(
      z.string().check(z.refine(isListSize)),
      `Live sessions to list, an integer in [1, ${MAX_SESSION_LIST_SIZE}] (default 100).`,
      { pattern: '^[0-9]*$' },
    ),
  ),
});

/** Errors of the listing's query. */
export const explainSessionListQuery: IssueExplainer<Record<string, unknown>> = (issue, query) =>
  fieldOf(issue) === 'cursor'
    ? new InvalidSessionCursorError(query['cursor'])
    : new CodedError(
        'invalid_size',
        `size must be an integer in [1, ${MAX_SESSION_LIST_SIZE}], got ${describeValue(query['size'])}`,
      );

/** `DELETE /session/:id`'s query: `?purge=true` also deletes the stored session. */
export const DeleteSessionQuery = z.looseObject({
  purge: z.optional(
    documented(
      z.enum(['true', 'false']),
      'With `true`, the stored session, its history, its admission ledger and its finished model calls are deleted too (the session is closed first when live); `404` when it is not stored.',
    ),
  ),
});

/** Errors of the close route's query. */
export const explainDeleteSessionQuery: IssueExplainer<Record<string, unknown>> = (_issue, query) =>
  new CodedError('invalid_purge', `purge must be true or false, got ${describeValue(query['purge'])}`);

/** `:cwd` of the listing: a URL-encoded absolute path. */
export const WorkspaceParams = z.object({
  cwd: documented(z.string(), 'The URL-encoded absolute path of a workspace.'),
});

/** `200` of `POST /session`. */
export const SessionHandle = documented(z.looseObject(SessionHandleShape), 'The session and your client id.');

/** `200` of `/load` and `/resume`: the handle plus where the event stream stands. */
export const RestoredSession = z.looseObject({ ...SessionHandleShape, ...StreamPosition });

/** `201` of `/branch`. */
export const BranchedSession = z.looseObject({
  ...SessionHandleShape,
  ...StreamPosition,
  displayName: z.string(),
  forkedFrom: z.looseObject({ sessionId: z.string() }),
});

/** A session's summary (PROTOCOL §4 status, and one entry of a listing). */
export const SessionSummary = z.looseObject({
  sessionId: z.string(),
  workspaceCwd: z.string(),
  cwd: z.string(),
  createdAt: WireTime,
  updatedAt: WireTime,
  displayName: z.optional(z.string()),
  forkedFrom: z.optional(z.looseObject({ sessionId: z.string() })),
  clientCount: z.int(),
  hasActivePrompt: z.boolean(),
  pendingPromptCount: z.int(),
  isWaitingForPermission: z.boolean(),
  pendingInteractionCount: z.int(),
  pendingInteractions: documented(z.array(z.unknown()), 'The open permission requests.'),
});

/** `200` of the listing: newest first, with `nextCursor` while more remain. */
export const SessionListPage = z.looseObject({
  sessions: z.array(SessionSummary),
  nextCursor: z.optional(z.string()),
});

/** `200` of `POST /session/:id/heartbeat`. */
export const HeartbeatAnswer = z.looseObject({
  sessionId: z.string(),
  clientId: z.optional(z.string()),
  lastSeenAt: documented(z.number(), 'Epoch milliseconds.'),
});
