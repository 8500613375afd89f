import { useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { ItemRow, type ItemActions } from './items.js';
import { PromptBox } from './prompt-box.js';
import type { SessionLive } from './session-live.js';

// The open session: its items (each drawn again only when it changed; off-screen ones skipped
// by the browser's `content-visibility`; the newest WINDOW drawn, earlier ones a click away),
// the link state, and the prompt box. Only this view draws again as events arrive, and it keeps
// to the bottom while the person has not scrolled up.

export interface ConversationViewProps {
  live: SessionLive;
  limit: number | null;
}

/** Items drawn at once: the newest; earlier ones a click away, so a long session stays cheap. */
const WINDOW = 300;

const LINK_TEXT = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  closed: 'closed',
};

/** The handlers the items need, bound to the session. */
function useActions(live: SessionLive): ItemActions {
  return useMemo<ItemActions>(
    () => ({
      vote: (requestId, optionId) => void live.vote(requestId, optionId).catch(() => {}),
      report: async (promptId) => {
        const response = await fetch(
          `/session/${encodeURIComponent(live.sessionId)}/prompts/${encodeURIComponent(promptId)}/report`,
        );
        const body = (await response.json()) as { error?: string };
        if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
        return body;
      },
    }),
    [live],
  );
}

export function ConversationView({ live, limit }: ConversationViewProps) {
  const list = useRef<HTMLDivElement>(null);
  const conversation = live.conversation;
  const actions = useActions(live);
  const [shown, setShown] = useState(WINDOW);
  const hidden = Math.max(0, conversation.items.length - shown);
  const [, redraw] = useReducer((n: number, _: unknown) => n + 1, 0);
  useEffect(() => {
    live.onChange = () => redraw(undefined);
    redraw(undefined); // what arrived before this view subscribed
    return () => live.close();
  }, [live]);
  // Follows the newest item while the person is at the bottom (read before this render changes it).
  const element = list.current;
  const atBottom = element === null || element.scrollHeight - element.scrollTop - element.clientHeight < 80;
  useEffect(() => {
    if (atBottom && list.current !== null) list.current.scrollTop = list.current.scrollHeight;
  });
  return (
    <>
      <div class="session-bar">
        <span>
          Session <code>{live.sessionId.slice(0, 8)}</code>
        </span>
        <span class={`link ${live.link}`} data-testid="link" role="status">
          {LINK_TEXT[live.link]}
        </span>
      </div>
      <div class="items" ref={list} data-testid="items" role="log" aria-label="Conversation">
        {hidden === 0 ? null : (
          <button type="button" class="earlier" onClick={() => setShown(shown + WINDOW)}>
            Show {Math.min(hidden, WINDOW)} earlier of {hidden}
          </button>
        )}
        {conversation.items.slice(hidden).map((item) => (
          <ItemRow key={item.key} item={item} actions={actions} />
        ))}
      </div>
      <PromptBox
        pending={conversation.pending.size}
        limit={limit}
        send={(text) => live.send(text)}
        cancel={() => void live.cancel().catch(() => {})}
      />
    </>
  );
}
