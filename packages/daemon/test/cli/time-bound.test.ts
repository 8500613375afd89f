import { InvalidArgumentError } from 'commander';
import { describe, expect, test } from 'vitest';
import { parseTimeBound } from '../../src/cli/journal/time-bound.js';

const NOW = Date.parse('2025-06-01T12:00:00.000Z');

describe('sluice journal --since / --until', () => {
  test.each([
    ['500ms', NOW - 500],
    ['90s', NOW - 90_000],
    ['10m', NOW - 600_000],
    ['2h', NOW - 7_200_000],
    ['7d', NOW - 7 * 86_400_000],
  ])('a duration %s means that long before now', (raw, expected) => {
    expect(parseTimeBound(raw, NOW)).toBe(expected);
  });

  test.each([
    ['2025-01-31T12:00:00Z', Date.parse('2025-01-31T12:00:00Z')],
    ['2025-01-31T12:00:00.250+02:00', Date.parse('2025-01-31T10:00:00.250Z')],
    ['2025-01-31', Date.parse('2025-01-31T00:00:00Z')],
  ])('an ISO 8601 time %s is that instant', (raw, expected) => {
    expect(parseTimeBound(raw, NOW)).toBe(expected);
  });

  test.each(['yesterday', '10', '10 m', '-5m', '2025-13-45', '1.5h', ''])(
    '%j is refused with the accepted forms',
    (raw) => {
      expect(() => parseTimeBound(raw, NOW)).toThrow(InvalidArgumentError);
      expect(() => parseTimeBound(raw, NOW)).toThrow(/ISO 8601 .* 10m/);
    },
  );
});
