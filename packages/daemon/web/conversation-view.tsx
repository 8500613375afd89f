import { useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { ItemBlock, type ItemActions } from './items.js';
import { usePinnedToBottom } from './pinned-to-bottom.js';
import { PromptBox } from './prompt-box.js';
import { blocks, nextRows, STEP, WINDOW, type RowRange } from './rows-window.js';
import type { SessionLive } from './session-live.js';

// The open session: its items (each drawn again only when it changed; off-screen ones skipped
// by the browser's `content-visibility`; the newest few hundred drawn, rows-window.ts),
// the link state, and the prompt box. Only this view draws again as events arrive, and it keeps
// to the bottom while the person has not scrolled up.

export interface ConversationViewProps {
  live: SessionLive;
  limit: number | null;
}

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
  const [, redraw] = useReducer((n: number, _: unknown) => n + 1, 0);
  useEffect(() => {
    live.onChange = () => redraw(undefined);
    redraw(undefined); // what arrived before this view subscribed
    return () => live.close();
  }, [live]);
  const content = useRef<HTMLDivElement>(null);
  const { atBottom, scrollEvents } = usePinnedToBottom(list, content);
  // The first item drawn: moves down (items leave the page) only while the person is at the
  // bottom, so the rows someone scrolled up to read stay where they are.
  const first = useRef(0);
  const newest = Math.floor(Math.max(0, conversation.items.length - shown) / STEP) * STEP;
  if (atBottom.current || newest < first.current) first.current = newest;
  const hidden = first.current;
  const drawn = useRef<RowRange>({ from: 0, to: 0 });
  const rows = (drawn.current = nextRows(drawn.current, conversation.items.length, hidden));
  useLayoutEffect(() => {
    if (rows.from === hidden) return undefined;
    const frame = requestAnimationFrame(() => redraw(undefined)); // the earlier rows, a block a frame
    return () => cancelAnimationFrame(frame);
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
      <div
        class="items"
        ref={list}
        {...scrollEvents}
        data-testid="items"
        role="log"
        aria-label="Conversation"
      >
        <div class="items-content" ref={content}>
          {hidden === 0 ? null : (
            <button type="button" class="earlier" onClick={() => setShown(shown + WINDOW)}>
              Show {Math.min(hidden, WINDOW)} earlier of {hidden}
            </button>
          )}
          {blocks(conversation.items, rows).map((block) => (
            <ItemBlock key={block[0]!.key} items={block} actions={actions} />
          ))}
        </div>
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
