import { describeValue } from '@sluice/protocol';
import { InvalidArgumentError } from 'commander';

/** Milliseconds of each unit a relative time may use (`90s`, `10m`, `2h`, `7d`). */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const RELATIVE = /^(\d+)(ms|s|m|h|d)$/;
/** A calendar date or date-time; `Date.parse` alone also accepts loose forms like `1`. */
const ISO_LIKE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * The instant `raw` names: an ISO 8601 date or date-time (`2025-01-31`, `2025-01-31T12:00:00Z`),
 * or a duration before `nowMs` (`10m` = ten minutes ago). Throws `InvalidArgumentError` saying
 * which forms are accepted, so commander names the flag.
 */
export function parseTimeBound(raw: string, nowMs: number): number {
  const text = raw.trim();
  const relative = RELATIVE.exec(text);
  if (relative !== null) return nowMs - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  const absolute = ISO_LIKE.test(text) ? Date.parse(text) : NaN;
  if (Number.isFinite(absolute)) return absolute;
  throw new InvalidArgumentError(
    `must be an ISO 8601 time (2025-01-31T12:00:00Z) or a duration ago such as 90s, 10m, 2h or 7d, got ${describeValue(raw)}`,
  );
}

/** `--since` / `--until` as commander parses them: relative to the moment the command runs. */
export function timeBound(raw: string): number {
  return parseTimeBound(raw, Date.now());
}
