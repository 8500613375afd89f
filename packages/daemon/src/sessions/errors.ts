import { CataloguedError, describeValue, type CodesOf } from '@sluice/protocol';
import type { SessionOwner } from '@sluice/store';
/** Stable codes of the session layer's errors; their wire forms are in @sluice/protocol's catalogue. */
export type SessionErrorCode = CodesOf<
  | 'session_not_found'
  | 'session_closing'
  | 'session_closed'
  | 'session_limit_exceeded'
  | 'prompt_queue_full'
  | 'prompt_aborted'
  | 'prompt_deadline_exceeded'
  | 'branch_while_prompt_active'
  | 'invalid_client_id'
  | 'invalid_session_scope'
  | 'invalid_session_id'
  | 'invalid_prompt'
  | 'invalid_deadline_ms'
  | 'invalid_cwd'
  | 'workspace_mismatch'
  | 'session_workspace_conflict'
  | 'session_id_conflict'
  | 'invalid_cursor'
  | 'invalid_branch_name'
  | 'invalid_turn_result'
  | 'bridge_shutting_down'
  | 'daemon_shutting_down'
  | 'idempotency_key_reused'
  | 'invalid_idempotency_key'
  | 'unknown_agent'
  | 'session_owned_elsewhere'
>;

/** Base of every error the session layer throws: a stable `code`, never a message to match. */
export abstract class SessionError extends CataloguedError<SessionErrorCode> {}

/** No live session has this id (HTTP `404 session_not_found`). */
export class SessionNotFoundError extends SessionError {
  readonly code: SessionErrorCode = 'session_not_found';
  constructor(
    readonly sessionId: string,
    message = `No session with id ${describeValue(sessionId)}`,
  ) {
    super(message);
  }

  override wireDetails(): Record<string, unknown> {
    return { sessionId: this.sessionId };
  }
}

/** The session is being closed and accepts nothing new (HTTP `404 session_closing`). */
export class SessionClosingError extends SessionNotFoundError {
  override readonly code = 'session_closing';
  constructor(sessionId: string) {
    super(sessionId, `Session "${sessionId}" is closing`);
  }

  /** Closing reads as not found on the wire (PROTOCOL §1). */
  override wireMessage(): string {
    return `No session with id "${this.sessionId}"`;
  }
}

/** An admitted prompt or branch ended because its session was closed (`turn_error.code`). */
export class SessionClosedError extends SessionError {
  readonly code = 'session_closed';
  constructor(
    readonly sessionId: string,
    readonly reason: string,
  ) {
    super(`Session "${sessionId}" was closed (${reason})`);
  }

  override wireMessage(): string {
    return `No session with id "${this.sessionId}"`;
  }

  override wireDetails(): Record<string, unknown> {
    return { sessionId: this.sessionId };
  }
}

/** Opening one more session would pass a session cap (HTTP `503 session_limit_exceeded`). */
export class SessionLimitExceededError extends SessionError {
  readonly code = 'session_limit_exceeded';
  constructor(
    readonly limit: number,
    readonly scope: 'daemon' | 'workspace',
    readonly workspaceCwd?: string,
  ) {
    super(
      scope === 'daemon'
        ? `Session limit reached (${limit} sessions)`
        : `Session limit reached for workspace "${workspaceCwd ?? ''}" (${limit} sessions)`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { limit: this.limit, scope: this.scope };
  }
}

/** The session already holds `limit` pending prompts; nothing was admitted (SPEC BP-1, BP-8). */
export class PromptQueueFullError extends SessionError {
  readonly code = 'prompt_queue_full';
  constructor(
    readonly sessionId: string,
    readonly limit: number,
    readonly pendingCount: number,
  ) {
    super(`Prompt queue full for session "${sessionId}" (${pendingCount}/${limit} pending)`, {
      stack: false,
    });
  }

  override wireDetails(): Record<string, unknown> {
    return { sessionId: this.sessionId, limit: this.limit, pendingCount: this.pendingCount };
  }
}

/** The caller's signal was already aborted; rejected before the pending counter moved (BP-6). */
export class PromptAbortedError extends SessionError {
  readonly code = 'prompt_aborted';
  constructor(
    readonly sessionId: string,
    cause: unknown,
  ) {
    super(`Prompt for session "${sessionId}" was aborted before admission`, { cause });
  }
}

/** An admitted prompt ran past its deadline, queue time included (SPEC BP-5). */
export class PromptDeadlineExceededError extends SessionError {
  readonly code = 'prompt_deadline_exceeded';
  constructor(
    readonly sessionId: string,
    readonly promptId: string,
    readonly deadlineMs: number,
  ) {
    super(`Prompt "${promptId}" exceeded its deadline of ${deadlineMs} ms`);
  }
}

/** A branch was requested while a prompt of the session is queued or running (HTTP `409`). */
export class BranchWhilePromptActiveError extends SessionError {
  readonly code = 'branch_while_prompt_active';
  constructor(readonly sessionId: string) {
    super(`Cannot branch session "${sessionId}": a prompt is pending`);
  }

  override wireDetails(): Record<string, unknown> {
    return { sessionId: this.sessionId };
  }
}

/** A client id is malformed, or well-formed but not registered on the session (HTTP `400`). */
export class InvalidClientIdError extends SessionError {
  readonly code = 'invalid_client_id';
  constructor(
    readonly clientId: unknown,
    readonly sessionId?: string,
  ) {
    super(
      sessionId === undefined
        ? `clientId must match ^[A-Za-z0-9._:-]{1,128}$, got ${describeValue(clientId)}`
        : `Client ${describeValue(clientId)} is not registered on session "${sessionId}"`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return this.sessionId === undefined ? {} : { sessionId: this.sessionId, clientId: this.clientId };
  }
}

/** `scope` is neither `single` nor `thread` (HTTP `400 invalid_session_scope`). */
export class InvalidSessionScopeError extends SessionError {
  readonly code = 'invalid_session_scope';
  constructor(readonly scope: unknown) {
    super(`sessionScope must be "single" or "thread", got ${describeValue(scope)}`);
  }
}

/** A caller-chosen session id is not a UUID. */
export class InvalidSessionIdError extends SessionError {
  readonly code = 'invalid_session_id';
  constructor(readonly sessionId: unknown) {
    super(`sessionId must be a UUID, got ${describeValue(sessionId)}`);
  }
}

/** The prompt is not a non-empty array of content blocks. */
export class InvalidPromptError extends SessionError {
  readonly code = 'invalid_prompt';
  constructor(detail: string) {
    super(`prompt must be a non-empty array of content blocks: ${detail}`);
  }
}

/** A per-request `deadlineMs` is not a positive integer the clock can represent. */
export class InvalidDeadlineError extends SessionError {
  readonly code = 'invalid_deadline_ms';
  constructor(
    readonly deadlineMs: unknown,
    readonly maxMs: number,
  ) {
    super(`deadlineMs must be a positive integer of at most ${maxMs}, got ${describeValue(deadlineMs)}`);
  }
}

/** `cwd` is not an absolute path. */
export class InvalidCwdError extends SessionError {
  readonly code = 'invalid_cwd';
  constructor(readonly cwd: unknown) {
    super(`cwd must be an absolute path, got ${describeValue(cwd)}`);
  }
}

/** `cwd` lies outside every served workspace (HTTP `400 workspace_mismatch`). */
export class WorkspaceMismatchError extends SessionError {
  readonly code = 'workspace_mismatch';
  constructor(
    readonly cwd: string,
    readonly workspaces: readonly string[],
  ) {
    super(`cwd ${describeValue(cwd)} is not inside a served workspace (${workspaces.join(', ')})`);
  }
}

/**
 * A load or resume named a served workspace, but the session is live in another one
 * (HTTP `409 session_workspace_conflict`, as the reference daemon answers).
 */
export class SessionWorkspaceConflictError extends SessionError {
  readonly code = 'session_workspace_conflict';
  constructor(
    readonly sessionId: string,
    readonly workspaceCwd: string,
    readonly liveWorkspaceCwd: string,
  ) {
    super(
      `Session "${sessionId}" is live in workspace "${liveWorkspaceCwd}", not in "${workspaceCwd}"; omit cwd or send that workspace`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return {
      sessionId: this.sessionId,
      workspaceCwd: this.workspaceCwd,
      liveWorkspaceCwd: this.liveWorkspaceCwd,
    };
  }
}

/**
 * `POST /session` chose the id of a session that is stored but not live (typically after a
 * restart): creating it afresh would replace its stored history, so nothing is opened (HTTP
 * `409 session_id_conflict`, as the reference daemon answers a persisted id). Restore it with
 * `POST /session/:id/load` or `/resume` instead.
 */
export class SessionIdConflictError extends SessionError {
  readonly code = 'session_id_conflict';
  readonly conflict = 'persisted';
  constructor(
    readonly sessionId: string,
    readonly workspaceCwd: string,
  ) {
    super(
      `Session "${sessionId}" already exists (stored, not live); restore it with POST /session/${sessionId}/load or /resume`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { sessionId: this.sessionId, workspaceCwd: this.workspaceCwd, conflict: this.conflict };
  }
}

/**
 * A load or resume of a session that another live daemon of the fleet has open (HTTP `409
 * session_owned_elsewhere`): one daemon at a time runs a session, and the answer names the
 * owner and, when it advertises one, its URL — where the client sends the request instead.
 */
export class SessionOwnedElsewhereError extends SessionError {
  readonly code = 'session_owned_elsewhere';
  constructor(
    readonly sessionId: string,
    readonly owner: SessionOwner,
  ) {
    super(
      `Session "${sessionId}" is open on another Sluice daemon (node ${owner.nodeId}${owner.url === undefined ? '' : ` at ${owner.url}`}); send the request there, or retry once that daemon has stopped`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { sessionId: this.sessionId, owner: this.owner };
  }
}

/** A session listing cursor that this daemon did not hand out (HTTP `400 invalid_cursor`). */
export class InvalidSessionCursorError extends SessionError {
  readonly code = 'invalid_cursor';
  constructor(readonly cursor: unknown) {
    super(
      `cursor must be the nextCursor of a previous page of this listing, got ${describeValue(cursor, 64)}`,
    );
  }
}

/** A branch name is not a string of 1..200 characters. */
export class InvalidBranchNameError extends SessionError {
  readonly code = 'invalid_branch_name';
  constructor(readonly branchName: unknown) {
    super(
      `branch name must be a non-blank string of at most 200 characters, got ${describeValue(branchName)}`,
    );
  }
}

/** The agent resolved a turn with something that is not `{ stopReason: string }`. */
export class InvalidTurnResultError extends SessionError {
  readonly code = 'invalid_turn_result';
  constructor(readonly promptId: string) {
    super(`Agent returned an invalid turn result for prompt "${promptId}"`);
  }
}

/** The bridge was shut down and opens no sessions. */
export class BridgeShuttingDownError extends SessionError {
  readonly code = 'bridge_shutting_down';
  constructor() {
    super('The session bridge is shutting down');
  }
}

/** The daemon is draining: it finishes what it admitted and admits nothing new (HTTP 503). */
export class DaemonDrainingError extends SessionError {
  readonly code = 'daemon_shutting_down';
  constructor() {
    super('The daemon is shutting down');
  }
}

/** An `Idempotency-Key` sent again with a different request (HTTP `422 idempotency_key_reused`). */
export class IdempotencyKeyReusedError extends SessionError {
  readonly code = 'idempotency_key_reused';
  constructor(readonly sessionId: string) {
    super(
      `Idempotency-Key was already used on session "${sessionId}" for a different prompt; use a new key for a new prompt`,
    );
  }
}

/** An `Idempotency-Key` header that is empty, too long or not printable ASCII (HTTP `400`). */
export class InvalidIdempotencyKeyError extends SessionError {
  readonly code = 'invalid_idempotency_key';
  constructor(key: unknown, maxChars: number) {
    super(
      `Idempotency-Key must be 1 to ${maxChars} printable ASCII characters, got ${describeValue(key, 64)}`,
    );
  }
}

/** A create named an agent (`agent` body field) that this daemon does not run (HTTP `400`). */
export class UnknownAgentError extends SessionError {
  readonly code = 'unknown_agent';
  constructor(
    readonly agent: unknown,
    readonly known: readonly string[],
  ) {
    super(
      known.length === 0
        ? `agent ${describeValue(agent, 64)} is unknown: this daemon runs only its built-in agent`
        : `agent ${describeValue(agent, 64)} is unknown; choose one of ${known.map((name) => JSON.stringify(name)).join(', ')}`,
    );
  }

  override wireDetails(): Record<string, unknown> {
    return { known: this.known };
  }
}
