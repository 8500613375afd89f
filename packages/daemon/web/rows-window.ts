// Which of a conversation's items the page draws, so a long session stays cheap: the newest
// WINDOW or so (earlier ones a click away), the oldest leaving STEP at a time rather than one
// with each new item (which shifted every row each frame), and never more than a frame's worth
// of new rows at once: a bigger batch (a replayed history, a page catching up after it was
// busy or hidden) draws its newest rows first and the earlier ones above them, a block a frame.

/** Items drawn at once: the newest; earlier ones a click away. */
export const WINDOW = 300;
/** The oldest drawn items leave this many at a time (so WINDOW to WINDOW + STEP - 1 are drawn). */
export const STEP = 100;
/** Items compared as one block before their rows; rows are added above at most a block a frame. */
export const BLOCK = 50;
/** New rows drawn below in one frame at most; past it the drawing starts over from the newest. */
export const ROWS_PER_FRAME = 50;

/** The items drawn: indexes `from` (a multiple of BLOCK) to `to` (exclusive). */
export interface RowRange {
  from: number;
  to: number;
}

const blockStart = (index: number): number => Math.max(0, Math.floor(index / BLOCK) * BLOCK);

/**
 * The rows to draw now, given those `drawn` until now, the `count` items and the oldest one the
 * page wants (`wanted`, a multiple of BLOCK). Not yet all wanted when `from > wanted`: the
 * caller draws again at the next frame.
 */
export function nextRows(drawn: RowRange, count: number, wanted: number): RowRange {
  if (drawn.to > count || count - drawn.to > ROWS_PER_FRAME)
    return { from: Math.max(wanted, blockStart(count - ROWS_PER_FRAME)), to: count };
  const from = Math.max(drawn.from, wanted);
  return { from: Math.max(wanted, from - (from > wanted ? BLOCK : 0)), to: count };
}

/** The items `rows` covers, in blocks of BLOCK that begin at multiples of BLOCK. */
export function blocks<T>(items: readonly T[], rows: RowRange): T[][] {
  const out: T[][] = [];
  for (let start = rows.from; start < rows.to; start += BLOCK) out.push(items.slice(start, start + BLOCK));
  return out;
}
