import { describe, expect, test } from 'vitest';
import { RecentMap } from '../../web/recent-map.js';

// The web page keeps what its newest items drew (issue 31, long sessions), so rows drawn again
// reuse their markdown; the oldest entries leave first, so it stays bounded.

describe('issue 31: the markdown kept for rows drawn again', () => {
  test('keeps the most recently used entries, the oldest leaving first', () => {
    const map = new RecentMap<string, number>(2);
    map.add('a', 1);
    map.add('b', 2);
    expect(map.get('a')).toBe(1); // now the most recent
    map.add('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect([map.get('a'), map.get('c'), map.size]).toEqual([1, 3, 2]);
  });

  test('a capacity that is not a positive integer is refused, naming it', () => {
    expect(() => new RecentMap(0)).toThrow(/positive integer, not 0/);
    expect(() => new RecentMap(1.5)).toThrow(/not 1.5/);
  });
});
