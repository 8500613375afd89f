import { DaemonClient, DaemonHttpError, type Capabilities, type SessionSummary } from '@sluice/sdk';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ConversationView } from './conversation-view.js';
import { Header } from './header.js';
import { SessionsPanel } from './sessions-panel.js';
import { SessionLive } from './session-live.js';

// The web client's frame: a workspace, its sessions, the open session's conversation. It talks
// to the daemon that served it with the SDK; the browser adds the sign-in cookie to each request.

const PAGE_SIZE = 20;

/**
 * The daemon's client: this origin, no local reservation (the daemon's `503` is what the page
 * shows), and streams that end when their connection does: the page re-opens them itself, so
 * that it can say it is reconnecting (session-live.ts).
 */
const client = new DaemonClient({
  baseUrl: location.origin,
  maxPendingPromptsPerSession: null,
  reconnect: { maxAttempts: 0 },
});

/** A workspace's sessions, newest first, a page at a time. */
function useSessions(workspace: string | undefined) {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [live, setLive] = useState<ReadonlySet<string>>(new Set());
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const load = useCallback(
    async (more: boolean): Promise<void> => {
      if (workspace === undefined) return;
      const [page, open] = await Promise.all([
        client.listWorkspaceSessionsPage(workspace, {
          pageSize: PAGE_SIZE,
          ...(more && cursor !== undefined ? { cursor } : {}),
        }),
        liveSessions(),
      ]);
      setSessions((known) => (more ? [...known, ...page.sessions] : page.sessions));
      setLive(open);
      setCursor(page.nextCursor);
    },
    [workspace, cursor],
  );
  return { sessions, live, more: cursor !== undefined, load };
}

/** The ids of the daemon's live sessions (`GET /daemon/sessions`; a listing's others are stored). */
async function liveSessions(): Promise<ReadonlySet<string>> {
  const response = await fetch('/daemon/sessions?size=1000');
  await ok(response.clone());
  const body = (await response.json()) as { sessions: SessionSummary[] };
  return new Set(body.sessions.map((session) => session.sessionId));
}

/** Waits (2 s at most) until a session being closed has left the live ones: the close answers first. */
async function closed(sessionId: string): Promise<void> {
  for (let i = 0; i < 20 && (await liveSessions()).has(sessionId); i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Opens a session in the page: resumes a live one, or loads a stored one (its history replays). */
async function attach(sessionId: string): Promise<void> {
  try {
    await client.resumeSession(sessionId);
  } catch (error) {
    if (!(error instanceof DaemonHttpError) || error.status !== 404) throw error;
    await client.loadSession(sessionId);
  }
}

/** Throws the daemon's message when `response` is not a success. */
async function ok(response: Response): Promise<void> {
  if (response.ok) return;
  const body = (await response.json().catch(() => ({}))) as { error?: string };
  throw new Error(body.error ?? `HTTP ${response.status}`);
}

/** The open session, and opening another (the page's hash names it, so a reload finds it). */
function useOpenSession(report: (error: unknown) => void) {
  const [live, setLive] = useState<SessionLive | undefined>(undefined);
  const open = async (sessionId: string | undefined): Promise<void> => {
    setLive((current) => {
      current?.close();
      return undefined;
    });
    if (sessionId === undefined) return history.replaceState(null, '', location.pathname);
    await attach(sessionId);
    setLive(new SessionLive(client, sessionId));
    history.replaceState(null, '', `#${sessionId}`);
  };
  useEffect(() => {
    const wanted = location.hash.slice(1);
    if (wanted !== '') void open(wanted).catch(report);
  }, []);
  return { live, open };
}

export function App() {
  const [caps, setCaps] = useState<Capabilities | undefined>(undefined);
  const [workspace, setWorkspace] = useState<string | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const report = (error: unknown): void => setProblem(error instanceof Error ? error.message : String(error));
  const { sessions, live: liveIds, more, load } = useSessions(workspace);
  const { live, open } = useOpenSession(report);

  useEffect(() => {
    client.capabilities().then((found) => {
      setCaps(found);
      setWorkspace(found.workspaceCwd);
    }, report);
  }, []);
  useEffect(() => void load(false).catch(report), [workspace]);

  /** Runs a session action, then lists the sessions again. */
  const act = (work: () => Promise<unknown>): void =>
    void work()
      .then(() => load(false))
      .catch(report);
  const current = live?.sessionId;
  return (
    <>
      <Header client={client} workspace={workspace} onWorkspace={setWorkspace} />
      {problem === undefined ? null : (
        <p class="problem" role="alert">
          {problem}{' '}
          <button type="button" onClick={() => setProblem(undefined)}>
            Dismiss
          </button>
        </p>
      )}
      <div class="layout">
        <SessionsPanel
          sessions={sessions}
          live={liveIds}
          current={current}
          more={more}
          onMore={() => void load(true).catch(report)}
          onOpen={(id) => void open(id).catch(report)}
          onCreate={() =>
            act(async () => {
              const body = {
                sessionScope: 'thread' as const,
                ...(workspace === undefined ? {} : { cwd: workspace }),
              };
              await open((await client.createOrAttachSession(body)).sessionId);
            })
          }
          onBranch={(id) => act(async () => open((await client.branchSession(id, {})).sessionId))}
          onClose={(id) =>
            act(async () => {
              await client.closeSession(id);
              await closed(id);
            })
          }
          onPurge={(id) =>
            act(async () => {
              if (current === id) await open(undefined);
              await fetch(`/session/${encodeURIComponent(id)}?purge=true`, { method: 'DELETE' }).then(ok);
            })
          }
        />
        <main class="conversation-pane">
          {live === undefined ? (
            <p class="empty">Pick a session or start a new one.</p>
          ) : (
            <ConversationView
              key={live.sessionId}
              live={live}
              limit={caps?.limits?.maxPendingPromptsPerSession ?? null}
            />
          )}
        </main>
      </div>
    </>
  );
}
