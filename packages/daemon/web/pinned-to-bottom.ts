import type { RefObject } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

// A scrolling list that follows its newest item while the person reads at the bottom, and
// stays where they put it once they scroll up.

/** Keys that scroll the list a person is in: a key press of theirs that may leave the bottom. */
const SCROLL_KEYS = new Set(['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', ' ']);

/**
 * Keeps the list at its newest item while the person is at the bottom: each time its content
 * changes size (new items, items growing as they come into view, the oldest leaving), after the
 * browser's layout and before it paints, so pinning costs no layout of its own. Only the person
 * moves it away (wheel, touch, scrolling keys, the scroll bar), never the page's own changes;
 * reaching the bottom again pins it again.
 */
export function usePinnedToBottom(
  list: RefObject<HTMLDivElement | null>,
  content: RefObject<HTMLDivElement | null>,
) {
  const atBottom = useRef(true);
  const moved = useRef(false);
  useLayoutEffect(() => {
    const scroller = list.current!;
    const observer = new ResizeObserver(() => {
      if (atBottom.current) scroller.scrollTop = scroller.scrollHeight;
    });
    observer.observe(content.current!);
    return () => observer.disconnect();
  }, []);
  const touched = (): void => void (moved.current = true);
  const scrollEvents = {
    onWheel: touched,
    onTouchMove: touched,
    onKeyDown: (event: KeyboardEvent) => SCROLL_KEYS.has(event.key) && touched(),
    onPointerDown: (event: PointerEvent) => event.target === list.current && touched(),
    onScroll: () => {
      const element = list.current!;
      if (element.scrollHeight - element.scrollTop - element.clientHeight < 80) {
        atBottom.current = true;
        moved.current = false;
      } else if (moved.current) atBottom.current = false;
    },
  };
  return { atBottom, scrollEvents };
}
