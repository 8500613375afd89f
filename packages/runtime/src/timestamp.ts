/**
 * ISO 8601 text of a wall-clock time in ms. Calls within the same millisecond reuse the last
 * string, because formatting dates is a visible cost at hundreds of thousands of records/s.
 */
export function isoTimestamp(epochMs: number): string {
  if (epochMs !== lastMs) {
    lastMs = epochMs;
    lastIso = new Date(epochMs).toISOString();
  }
  return lastIso;
}

let lastMs = Number.NaN;
let lastIso = '';
