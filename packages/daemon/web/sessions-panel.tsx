import type { SessionSummary } from '@sluice/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';

// A workspace's sessions, stored and live, newest first, a page at a time; each can be opened
// (resume a live one, load a stored one), branched, closed or purged (after a confirmation).

export interface SessionsPanelProps {
  sessions: SessionSummary[];
  /** Which of them are live (the others are stored). */
  live: ReadonlySet<string>;
  current: string | undefined;
  more: boolean;
  onMore(): void;
  onCreate(): void;
  onOpen(sessionId: string): void;
  onBranch(sessionId: string): void;
  onClose(sessionId: string): void;
  onPurge(sessionId: string): void;
}

const when = (value: unknown): string =>
  value === undefined ? '' : new Date(value as string | number).toLocaleString();

function PurgeDialog({
  target,
  confirm,
  dismiss,
}: {
  target: string | undefined;
  confirm(): void;
  dismiss(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (target !== undefined && !dialog.open) dialog.showModal();
    if (target === undefined && dialog.open) dialog.close();
  }, [target]);
  return (
    <dialog ref={ref} aria-labelledby="purge-title" onClose={dismiss} data-testid="purge-dialog">
      <h2 id="purge-title">Delete this session for good?</h2>
      <p>Its history and its recorded model calls are deleted; it cannot be loaded again.</p>
      <p class="muted">{target}</p>
      <div class="dialog-buttons">
        <button type="button" onClick={dismiss} autofocus>
          Keep it
        </button>
        <button type="button" class="danger" onClick={confirm} data-testid="purge-confirm">
          Delete
        </button>
      </div>
    </dialog>
  );
}

export function SessionsPanel(props: SessionsPanelProps) {
  const [purging, setPurging] = useState<string | undefined>(undefined);
  return (
    <nav class="sessions" aria-label="Sessions">
      <button type="button" class="primary" onClick={props.onCreate} data-testid="new-session">
        New session
      </button>
      <ul>
        {props.sessions.map((session) => {
          const live = props.live.has(session.sessionId);
          const name = session.displayName ?? session.sessionId.slice(0, 8);
          return (
            <li
              key={session.sessionId}
              class={session.sessionId === props.current ? 'current' : ''}
              data-testid="session-row"
              data-session-id={session.sessionId}
            >
              <button
                type="button"
                class="open"
                aria-current={session.sessionId === props.current ? 'true' : undefined}
                onClick={() => props.onOpen(session.sessionId)}
              >
                <span class="name">{name}</span>
                <span class="muted">
                  {live ? 'live' : 'stored'} · {when(session.updatedAt ?? session.createdAt)}
                </span>
              </button>
              <span class="row-actions">
                <button
                  type="button"
                  onClick={() => props.onBranch(session.sessionId)}
                  aria-label={`Branch ${name}`}
                >
                  Branch
                </button>
                {live ? (
                  <button
                    type="button"
                    onClick={() => props.onClose(session.sessionId)}
                    aria-label={`Close ${name}`}
                  >
                    Close
                  </button>
                ) : null}
                <button
                  type="button"
                  class="danger"
                  onClick={() => setPurging(session.sessionId)}
                  aria-label={`Delete ${name}`}
                >
                  Delete
                </button>
              </span>
            </li>
          );
        })}
      </ul>
      {props.more ? (
        <button type="button" onClick={props.onMore}>
          More sessions
        </button>
      ) : null}
      <PurgeDialog
        target={purging}
        dismiss={() => setPurging(undefined)}
        confirm={() => {
          if (purging !== undefined) props.onPurge(purging);
          setPurging(undefined);
        }}
      />
    </nav>
  );
}
