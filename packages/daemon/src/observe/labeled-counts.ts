/** The label value that stands for every value past the cap. */
export const OTHER_LABEL = 'other';

/** What a label value may look like (the shape of an error code); anything else counts as `unknown`. */
const LABEL_VALUE = /^[A-Za-z0-9_.:-]{1,64}$/;

interface Series {
  readonly values: readonly string[];
  value: number;
}

/**
 * Counters keyed by the values of one or two labels (a code, or an outcome and a code), holding
 * at most `maxSeries` series: a combination first seen once the cap is reached counts under
 * {@link OTHER_LABEL}, so an agent that invents error codes cannot grow the scrape without
 * bound. A value that is not code-shaped counts as `unknown`. Counting a known series allocates
 * nothing.
 */
export class LabeledCounts {
  private readonly series = new Map<string, Series>();

  constructor(
    readonly labelNames: readonly [string] | readonly [string, string],
    readonly maxSeries: number,
  ) {
    if (!Number.isInteger(maxSeries) || maxSeries < 2)
      throw new RangeError(`maxSeries must be an integer of at least 2, got ${String(maxSeries)}`);
  }

  /** Adds one to the series of `first` (and `second`, for two labels). */
  inc(first: string, second?: string): void {
    const key = second === undefined ? first : `${first}\u0000${second}`;
    const found = this.series.get(key);
    if (found !== undefined) {
      found.value++;
      return;
    }
    this.addSeries(second === undefined ? [first] : [first, second]);
  }

  /** The value of one series; 0 when it was never counted. */
  get(first: string, second?: string): number {
    return this.series.get(second === undefined ? first : `${first}\u0000${second}`)?.value ?? 0;
  }

  /** Sum over the series whose first label is `first` (over all series when omitted). */
  total(first?: string): number {
    let sum = 0;
    for (const { values, value } of this.series.values())
      if (first === undefined || values[0] === first) sum += value;
    return sum;
  }

  /** Every series with its labels, in the order they were first counted. */
  entries(): Array<{ labels: Record<string, string>; value: number }> {
    return [...this.series.values()].map(({ values, value }) => ({
      labels: Object.fromEntries(this.labelNames.map((name, index) => [name, values[index]!])),
      value,
    }));
  }

  /** A combination not counted under its own key yet: its sanitized (or capped) series. */
  private addSeries(raw: string[]): void {
    let values = raw.map((value) => (LABEL_VALUE.test(value) ? value : 'unknown'));
    let seriesKey = values.join('\u0000');
    let series = this.series.get(seriesKey);
    // One place is kept for the `other` series, so the map never holds more than maxSeries.
    if (series === undefined && this.series.size >= this.maxSeries - 1) {
      values = values.map(() => OTHER_LABEL);
      seriesKey = values.join('\u0000');
      series = this.series.get(seriesKey);
    }
    if (series !== undefined) series.value++;
    else this.series.set(seriesKey, { values, value: 1 });
  }
}
