import { resolve } from 'node:path';
import type { SessionPersistence } from './persistence.js';
import { summaryOf, type SessionSummary } from './session.js';
import type { SessionDirectory } from './session-directory.js';
import { compareListPosition, decodeListCursor, encodeListCursor, listPageSize } from './session-listing.js';
import type { SessionListOptions } from '@sluice/store';

/** One page of `GET /workspace/:cwd/sessions`; `nextCursor` is absent on the last page. */
export interface SessionSummaryPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

/** Summaries of sessions: one, the live ones, or a page of a workspace's live and stored ones. */
export class SessionLists {
  constructor(
    private readonly directory: SessionDirectory,
    private readonly persistence: SessionPersistence,
  ) {}

  /** Summary of one open session (PROTOCOL §4 status). */
  status(sessionId: string): SessionSummary {
    return this.directory.requireOpen(sessionId).summary();
  }

  /** Summaries of the open sessions, optionally of one workspace, oldest first. */
  live(workspaceCwd?: string): SessionSummary[] {
    const root = workspaceCwd === undefined ? undefined : resolve(workspaceCwd);
    const result: SessionSummary[] = [];
    for (const session of this.directory.values())
      if (session.state === 'open' && (root === undefined || session.workspaceCwd === root))
        result.push(session.summary());
    return result;
  }

  /**
   * One page of the sessions of the workspace `cwd` lies in: the stored ones merged with the
   * live ones, whose summary wins; newest first by `createdAt`, so paging is stable. A page reads
   * at most `size + 1` stored rows and scans the live sessions (bounded by the session caps).
   */
  async page(cwd: unknown, options: SessionListOptions): Promise<SessionSummaryPage> {
    const { workspaceCwd } = this.directory.resolveWorkspace(cwd);
    const size = listPageSize(options.size);
    const after = options.cursor === undefined ? undefined : decodeListCursor(options.cursor);
    const store = this.persistence.store;
    const stored =
      store?.list === undefined
        ? { sessions: [] }
        : await store.list(workspaceCwd, {
            size,
            ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
          });
    const byId = new Map<string, SessionSummary>();
    for (const session of stored.sessions) byId.set(session.sessionId, summaryOf(session));
    for (const session of this.directory.values())
      if (
        session.state === 'open' &&
        session.workspaceCwd === workspaceCwd &&
        (after === undefined || compareListPosition(after, session) < 0)
      )
        byId.set(session.sessionId, session.summary());
    const merged = [...byId.values()].sort(compareListPosition);
    const sessions = merged.slice(0, size);
    const last = sessions.at(-1);
    const more = merged.length > size || stored.nextCursor !== undefined;
    return more && last !== undefined ? { sessions, nextCursor: encodeListCursor(last) } : { sessions };
  }
}
