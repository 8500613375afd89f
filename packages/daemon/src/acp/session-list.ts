import type * as acp from '@agentclientprotocol/sdk';
import type { AcpDaemon } from './acp-daemon.js';
import { CodedError } from '@sluice/protocol';
import { WorkspaceMismatchError } from '../sessions/index.js';
import type { ListSessionsParams } from './client-params.js';

/** Sessions per `session/list` page. */
export const ACP_LIST_PAGE_SIZE = 50;

/**
 * One page of the workspace's sessions, live and stored, as REST lists them (issue 19 item 16):
 * after a restart a client finds the sessions it can load. The cursor is REST's. Each entry has
 * ACP's `SessionInfo` fields plus the REST summary's (`workspaceCwd`, `createdAt`,
 * `clientCount`, `hasActivePrompt`), which the official client's `listWorkspaceSessions` hands
 * its caller as it does a REST page.
 */
export async function listPage(
  bridge: AcpDaemon['bridge'],
  params: ListSessionsParams,
): Promise<acp.ListSessionsResponse> {
  const size = params.size === undefined ? ACP_LIST_PAGE_SIZE : pageSize(params.size);
  const cursor = params.cursor ?? undefined;
  let page: Awaited<ReturnType<AcpDaemon['bridge']['listWorkspaceSessions']>>;
  try {
    page = await bridge.listWorkspaceSessions(params.cwd, {
      size,
      ...(cursor === undefined || cursor === '' ? {} : { cursor }),
    });
  } catch (error) {
    // A workspace this daemon does not serve has no sessions here.
    if (error instanceof WorkspaceMismatchError) return { sessions: [] };
    throw error;
  }
  return {
    sessions: page.sessions.map((summary) => ({
      sessionId: summary.sessionId,
      cwd: summary.cwd,
      updatedAt: new Date(summary.updatedAt).toISOString(),
      ...(summary.displayName === undefined ? {} : { title: summary.displayName }),
      workspaceCwd: summary.workspaceCwd,
      createdAt: new Date(summary.createdAt).toISOString(),
      clientCount: summary.clientCount,
      hasActivePrompt: summary.hasActivePrompt,
    })),
    ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
  };
}

function pageSize(size: number): number {
  if (Number.isSafeInteger(size) && size >= 1) return Math.min(size, ACP_LIST_PAGE_SIZE);
  throw new CodedError('invalid_size', `size must be a positive integer, got ${String(size)}`);
}
