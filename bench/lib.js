// Small helpers shared by the benchmarks: timing, medians, markdown tables and verdicts.
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Runs `fn` `rounds` times (after one warm-up) and returns the median of its results. The heap
 * is collected before each round (`--expose-gc`), so one subject's garbage is not billed to
 * the next.
 */
export async function medianOf(rounds, fn) {
  const [values] = await roundRobin(rounds, [fn], (measure) => measure());
  return medianBy(values);
}

/**
 * Runs `measure(subject)` for every subject in turn, `rounds` times after one warm-up round, so
 * that a change in the machine's load falls on every subject alike. Returns each subject's
 * results, in the order of `subjects`. The heap is collected before each run (`--expose-gc`).
 */
export async function roundRobin(rounds, subjects, measure) {
  const runs = subjects.map(() => []);
  for (let round = 0; round <= rounds; round++) {
    for (const [i, subject] of subjects.entries()) {
      globalThis.gc?.();
      const result = await measure(subject);
      if (round > 0) runs[i].push(result);
    }
  }
  return runs;
}

/** The middle one of `results` ordered by `key` (the upper middle for an even count). */
export function medianBy(results, key = (result) => result) {
  const sorted = [...results].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor(sorted.length / 2)];
}

/** Keeps `workers` calls outstanding until `total` calls completed; returns calls per second. */
export async function closedLoop(total, workers, call) {
  let issued = 0;
  const start = performance.now();
  const worker = async () => {
    while (issued < total) {
      issued++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return total / ((performance.now() - start) / 1000);
}

/** Measures the event loop's delay while `fn` runs; returns `{ result, p99Ms, maxMs }`. */
export async function withLoopDelay(fn) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const result = await fn();
  histogram.disable();
  return { result, p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 };
}

export function fmt(n, digits = 0) {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** A markdown table from a header row and data rows. */
export function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A target's verdict as the markdown says it: a miss stands out. */
export const met = (ok) => (ok ? 'met' : '**not met**');
