/**
 * ISO 8601 text of a wall-clock time in ms. The date and time up to the second are formatted
 * once per second and the milliseconds appended, because formatting dates is a visible cost at
 * hundreds of thousands of records a second.
 */
export function isoTimestamp(epochMs: number): string {
  const ms = Math.floor(epochMs);
  // Records come by the thousand each millisecond: the last text is handed out again.
  if (ms === lastMs) return lastText;
  lastMs = ms;
  lastText = format(ms);
  return lastText;
}

function format(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    // Years outside 0000–9999 are written with a sign and six digits; keep those whole.
    const iso = new Date(second * 1000).toISOString();
    lastPrefix = iso.length === 24 ? iso.slice(0, 20) : '';
  }
  if (lastPrefix === '') return new Date(ms).toISOString();
  return lastPrefix + MILLIS[ms - second * 1000];
}

let lastMs = Number.NaN;
let lastText = '';
let lastSecond = Number.NaN;
let lastPrefix = '';

const MILLIS: string[] = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);
