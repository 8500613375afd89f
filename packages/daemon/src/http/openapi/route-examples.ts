/**
 * Values the examples of the API document share (`/docs` shows them), so that one session reads
 * the same across its operations. The examples themselves are in the route descriptions.
 */
export const EXAMPLE = {
  sessionId: '4018d156-0781-4736-b548-79cdaeacb093',
  branchId: '4816c491-9250-4388-8adc-94a27955fcaa',
  clientId: 'alice-laptop',
  promptId: 'ec97bc17-eb66-480e-aaa0-6392480274be',
  callId: '01a23ca1-82bd-7000-b213-cfcd0c5d3186',
  requestId: 'perm-7f3a',
  eventEpoch: '0c1aa74b-548d-4b75-9d95-cdfa5923db63',
  workspaceCwd: '/srv/project',
  createdAt: '2026-12-03T15:59:01.235Z',
} as const;

/** A session's handle, as `POST /session` answers it. */
export const SESSION_HANDLE_EXAMPLE = {
  sessionId: EXAMPLE.sessionId,
  workspaceCwd: EXAMPLE.workspaceCwd,
  attached: false,
  clientId: EXAMPLE.clientId,
  createdAt: EXAMPLE.createdAt,
};

/** The error body of a session id that names no live session. */
export const SESSION_NOT_FOUND_EXAMPLE = {
  error: `No session with id "${EXAMPLE.sessionId}"`,
  code: 'session_not_found',
  sessionId: EXAMPLE.sessionId,
};

/** A live session's summary, as its status and the session lists show it. */
export const SESSION_SUMMARY_EXAMPLE = {
  sessionId: EXAMPLE.sessionId,
  workspaceCwd: EXAMPLE.workspaceCwd,
  cwd: EXAMPLE.workspaceCwd,
  createdAt: EXAMPLE.createdAt,
  updatedAt: '2026-12-03T15:59:07.602Z',
  clientCount: 2,
  hasActivePrompt: true,
  pendingPromptCount: 1,
  isWaitingForPermission: false,
  pendingInteractionCount: 0,
  pendingInteractions: [],
};
