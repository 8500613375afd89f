/**
 * Parses a `Retry-After` header into milliseconds: delta-seconds (`5`) or an HTTP date.
 * Returns `undefined` for an absent or unreadable value; a date in the past gives `0`.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  if (!/^[A-Za-z]{3}, /.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
