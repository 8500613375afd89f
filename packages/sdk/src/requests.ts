import type { CreateSessionBody } from '@sluice/protocol';

/** `createOrAttachSession` request (reference names: `workspaceCwd` is sent as `cwd`). */
export interface CreateSessionRequest {
  workspaceCwd?: string;
  sessionScope?: 'single' | 'thread';
  sessionId?: string;
  modelServiceId?: string;
  approvalMode?: string;
}

/** `loadSession` / `resumeSession` request. */
export interface RestoreSessionRequest {
  workspaceCwd?: string;
  approvalMode?: string;
}

/** `branchSession` request. */
export interface BranchSessionRequest {
  name?: string;
}

/** The wire body of `POST /session`. */
export function createSessionBody(request: CreateSessionRequest): CreateSessionBody {
  const body: CreateSessionBody = {};
  if (request.workspaceCwd !== undefined) body.cwd = request.workspaceCwd;
  if (request.sessionScope !== undefined) body.sessionScope = request.sessionScope;
  if (request.sessionId !== undefined) body.sessionId = request.sessionId;
  if (request.modelServiceId !== undefined) body.modelServiceId = request.modelServiceId;
  if (request.approvalMode !== undefined) body.approvalMode = request.approvalMode;
  return body;
}

/** The wire body of `POST /session/:id/load` and `/resume`. */
export function restoreSessionBody(request: RestoreSessionRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (request.workspaceCwd !== undefined) body['cwd'] = request.workspaceCwd;
  if (request.approvalMode !== undefined) body['approvalMode'] = request.approvalMode;
  return body;
}

/** The query of one `GET /workspace/:cwd/sessions` page: `''` or `?size=…&cursor=…`. */
export function sessionPageQuery(options: { pageSize?: number; cursor?: string }): string {
  const query = new URLSearchParams();
  if (options.pageSize !== undefined) query.set('size', String(options.pageSize));
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  const encoded = query.toString();
  return encoded === '' ? '' : `?${encoded}`;
}
