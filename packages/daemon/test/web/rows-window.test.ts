import { describe, expect, test } from 'vitest';
import { BLOCK, ROWS_PER_FRAME, blocks, nextRows, type RowRange } from '../../web/rows-window.js';

// Which rows the web page draws (issue 31, long sessions): a stream's new rows at once, the
// oldest leaving only as the page wants; a batch bigger than a frame's rows (a replayed history,
// a page catching up) drawn newest first, the earlier rows above them a block a frame.

/** The ranges drawn frame after frame until every wanted row is in, starting from `drawn`. */
function frames(drawn: RowRange, count: number, wanted: number): RowRange[] {
  const out: RowRange[] = [];
  for (let rows = nextRows(drawn, count, wanted); ; rows = nextRows(rows, count, wanted)) {
    out.push(rows);
    if (rows.from === wanted) return out;
  }
}

describe('issue 31: the rows a long conversation draws', () => {
  test('a stream’s new rows are drawn in the frame they arrive, the oldest leave when the page says', () => {
    expect(nextRows({ from: 0, to: 10 }, 14, 0)).toEqual({ from: 0, to: 14 });
    expect(nextRows({ from: 0, to: 399 }, 400, 100)).toEqual({ from: 100, to: 400 });
  });

  test('a replayed history of 1,500 items draws its newest rows first, then a block a frame above them', () => {
    const drawn = frames({ from: 0, to: 0 }, 1_500, 1_200);
    expect(drawn[0]).toEqual({ from: 1_450, to: 1_500 });
    expect(drawn.map((rows) => rows.from)).toEqual([1_450, 1_400, 1_350, 1_300, 1_250, 1_200]);
    for (const [i, rows] of drawn.entries()) {
      const before = i === 0 ? 0 : drawn[i - 1]!.to - drawn[i - 1]!.from;
      expect(rows.to - rows.from - before).toBeLessThanOrEqual(ROWS_PER_FRAME);
    }
  });

  test('a batch bigger than a frame’s rows starts over from the newest; a reset (resync) too', () => {
    expect(nextRows({ from: 100, to: 400 }, 400 + ROWS_PER_FRAME + 1, 100)).toEqual({ from: 400, to: 451 });
    expect(nextRows({ from: 100, to: 400 }, 30, 0)).toEqual({ from: 0, to: 30 });
  });

  test('Show earlier brings the earlier rows back a block a frame', () => {
    expect(frames({ from: 1_200, to: 1_500 }, 1_500, 900).map((rows) => rows.from)).toEqual([
      1_150, 1_100, 1_050, 1_000, 950, 900,
    ]);
  });

  test('blocks begin at multiples of the block size, so each keeps its items as rows come and go', () => {
    const items = Array.from({ length: 230 }, (_, i) => i);
    const split = blocks(items, { from: 100, to: 230 });
    expect(split.map((block) => block[0])).toEqual([100, 100 + BLOCK, 100 + 2 * BLOCK]);
    expect(split.flat()).toEqual(items.slice(100));
  });
});
