import { useLayoutEffect, useReducer, useRef } from 'preact/hooks';
import { FrameBudget } from './frame-budget.js';
import { RecentMap } from './recent-map.js';
import { renderMarkdown } from './markdown.js';

// Model text drawn as markdown, within a frame budget (frame-budget.ts), so a burst of messages
// never stalls the page: a message whose turn has not come in this frame is drawn in a later
// one, meanwhile showing what it last drew (a streaming answer) or else its text as it is.

/** Markdown rendering per animation frame (ms): half a 60 Hz frame, the rest is layout and paint. */
const MARKDOWN_MS_PER_FRAME = 8;

const budget = new FrameBudget(
  MARKDOWN_MS_PER_FRAME,
  () => performance.now(),
  (callback) => requestAnimationFrame(callback),
);

interface Drawn {
  text: string;
  html: string;
}

/**
 * What the newest items drew, by item key: a row drawn again (a page catching up after a burst,
 * Show earlier) reuses its HTML when its text is the same.
 */
const rendered = new RecentMap<string, Drawn>(1_000);

/** Item `id`'s `text` as sanitised markdown, rendered once per text, when the frame budget allows. */
export function Markdown({ id, text }: { id: string; text: string }) {
  const [, retry] = useReducer((n: number, _: unknown) => n + 1, 0);
  const drawn = useRef<Drawn | undefined>(undefined);
  if (drawn.current?.text !== text) {
    const known = rendered.get(id);
    const html = known?.text === text ? known.html : budget.run(() => renderMarkdown(text));
    if (html !== undefined) drawn.current = rendered.add(id, { text, html });
  }
  const pending = drawn.current?.text !== text;
  useLayoutEffect(() => (pending ? budget.later(() => retry(undefined)) : undefined));
  const pendingMark = pending ? 'markdown' : undefined;
  // Keyed apart: Preact does not swap one element between children and `innerHTML` in place.
  return drawn.current === undefined ? (
    <div key="text" class="md plain" data-pending={pendingMark}>
      {text}
    </div>
  ) : (
    <div
      key="html"
      class="md"
      data-pending={pendingMark}
      dangerouslySetInnerHTML={{ __html: drawn.current.html }}
    />
  );
}
