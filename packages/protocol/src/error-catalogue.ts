/**
 * How one error code travels on the wire: its HTTP status, whether the same request may succeed
 * if simply sent again later, and the `Retry-After` (seconds, or an upstream's value verbatim)
 * its answer carries. ACP's JSON-RPC error is derived from the same form (PROTOCOL §8).
 */
export interface WireForm {
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfter?: number | string;
}

/** A refusal of this request: the same request fails again. */
const refused = (status: number): WireForm => ({ status, retryable: false });
/** A refusal for now: the same request may succeed later, after `retryAfter` seconds when given. */
const later = (status: number, retryAfter?: number): WireForm =>
  retryAfter === undefined ? { status, retryable: true } : { status, retryable: true, retryAfter };
/** Refused for good by this daemon, but its answer still says when to look again. */
const closed = (status: number, retryAfter: number): WireForm => ({ status, retryable: false, retryAfter });

/**
 * Every stable error code Sluice answers with, and its wire form: declared once, here (PROTOCOL
 * §1). The error classes name their code and their body's fields; the HTTP error table, the
 * model gateway's OpenAI errors and ACP's JSON-RPC errors are derived from this. A new error is
 * one line here plus its class (or `new CodedError(code, message)` for a transport's refusal).
 */
export const ERROR_CATALOGUE = {
  // Sessions (PROTOCOL §4, §5).
  session_not_found: refused(404),
  session_closing: refused(404),
  session_closed: refused(404),
  session_limit_exceeded: later(503, 5),
  prompt_queue_full: later(503, 5),
  prompt_aborted: refused(400),
  prompt_deadline_exceeded: later(504),
  idempotency_key_reused: refused(422),
  invalid_idempotency_key: refused(400),
  branch_while_prompt_active: later(409),
  invalid_client_id: refused(400),
  invalid_session_scope: refused(400),
  invalid_session_id: refused(400),
  invalid_prompt: refused(400),
  invalid_deadline_ms: refused(400),
  invalid_cwd: refused(400),
  workspace_mismatch: refused(400),
  session_workspace_conflict: refused(409),
  session_id_conflict: refused(409),
  session_owned_elsewhere: later(409),
  invalid_cursor: refused(400),
  invalid_branch_name: refused(400),
  invalid_turn_result: refused(500),
  bridge_shutting_down: closed(503, 5),
  daemon_shutting_down: later(503, 5),
  unknown_agent: refused(400),
  // `POST /session {"model"}` (issue 29 item 4): not a string; or an external agent that has no
  // per-session model switch asked for a model other than the one its process was started with.
  invalid_model: refused(400),
  model_not_switchable: refused(400),
  // A session's event stream (PROTOCOL §6).
  invalid_max_queued: refused(400),
  invalid_last_event_id: refused(400),
  subscriber_limit_exceeded: later(429, 5),
  event_not_serializable: refused(500),
  // Permission requests (PROTOCOL §7).
  permission_request_not_found: refused(404),
  invalid_permission_outcome: refused(400),
  invalid_option_id: refused(400),
  invalid_permission_request: refused(500),
  permission_limit_exceeded: later(503, 5),
  // The model runtime (SCH-14); a model call's admission is momentary, so retry after 1 s.
  model_overloaded: later(429, 1),
  request_too_large: refused(413),
  model_timeout: later(504),
  model_queue_timeout: later(429, 1),
  invalid_timeout: refused(400),
  budget_exhausted: refused(429),
  model_cancelled: refused(499),
  runtime_stopped: closed(503, 5),
  model_recording_failed: closed(503, 5),
  model_closure_failure: refused(500),
  // A model name the catalogue does not hold (issue 29): OpenAI's `model_not_found`.
  model_not_found: refused(404),
  // Per call: an upstream's answer decides the status, retryable and Retry-After.
  model_provider_error: refused(502),
  // Only ever recorded at start-up for a call a killed daemon left; no live call fails with it.
  interrupted: refused(500),
  // External agents: the agent, not the request, is at fault (502), or every process is busy.
  agent_unavailable: refused(502),
  agent_pool_exhausted: later(503, 5),
  agent_capacity: later(503, 5),
  agent_crashed: later(502),
  agent_unresponsive: later(504),
  agent_error: refused(502),
  // Durable budgets (issue 21).
  invalid_budget: refused(400),
  budget_not_found: refused(404),
  budget_exists: refused(409),
  budget_limit_reached: refused(409),
  budget_conflict: refused(409),
  // A session credential names a budget no prompt of its session was sent with (issue 28).
  budget_forbidden: refused(403),
  journal_not_readable: refused(501),
  // The transports' own refusals: bodies, queries, headers, ACP over HTTP, the gateway.
  invalid_body: refused(400),
  invalid_size: refused(400),
  invalid_purge: refused(400),
  prompt_not_found: refused(404),
  invalid_chat_request: refused(400),
  unsupported_media_type: refused(415),
  // The model gateway's (`/v1`) unknown paths and methods, in OpenAI's error shape (issue 29).
  route_not_found: refused(404),
  method_not_allowed: refused(405),
  not_acceptable: refused(406),
  unsupported_session_setting: refused(400),
  acp_connection_id_required: refused(400),
  acp_connection_not_found: refused(404),
  acp_session_mismatch: refused(400),
  acp_duplicate_request_id: refused(400),
  acp_stream_active: refused(409),
  acp_too_many_requests: later(429, 1),
  acp_connection_limit_exceeded: later(503, 5),
  acp_session_stream_limit_exceeded: later(429, 5),
  dashboard_viewer_limit: later(429, 5),
  // Browser sign-in (issue 28 item 3): a token in a URL stays in history and logs.
  token_in_url: refused(400),
  // A client's requests of one tier spent for this window (`--rate-limit`, issue 28 item 7); the
  // refusal says when the window ends (its own Retry-After). The reference daemon's code.
  rate_limit_exceeded: later(429),
  // The web client (issue 31): a cookie-authenticated change must come from this daemon's page.
  cross_site_request: refused(403),
} as const satisfies Record<string, WireForm>;

/** A code of {@link ERROR_CATALOGUE}: one that travels on the wire. */
export type WireErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * A union of catalogued codes, checked: `CodesOf<'a' | 'b'>` fails to compile when a code is not
 * in {@link ERROR_CATALOGUE}, so an error class cannot name a code without its wire form.
 */
export type CodesOf<Code extends WireErrorCode> = Code;
