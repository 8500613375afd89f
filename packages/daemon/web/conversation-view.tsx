import { useEffect, useMemo, useRef } from 'preact/hooks';
import { ItemRow, type ItemActions } from './items.js';
import { PromptBox } from './prompt-box.js';
import type { SessionLive } from './session-live.js';

// The open session: its items (each drawn again only when it changed; off-screen ones skipped
// by the browser's `content-visibility`), the link state, and the prompt box. The view keeps to
// the bottom while the person has not scrolled up.

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

export function ConversationView({ live, limit }: ConversationViewProps) {
  const list = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const conversation = live.conversation;
  const actions = useMemo<ItemActions>(
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
  useEffect(() => () => live.close(), [live]);
  useEffect(() => {
    const element = list.current;
    if (element !== null && pinned.current) element.scrollTop = element.scrollHeight;
  });
  const onScroll = (): void => {
    const element = list.current;
    if (element !== null)
      pinned.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
  };
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
        onScroll={onScroll}
        data-testid="items"
        aria-live="polite"
        aria-busy={conversation.pending.size > 0}
      >
        {conversation.items.map((item) => (
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
