/** One scrape in the Prometheus text format, read back: every sample by name and labels. */
export class Scrape {
  private readonly samples = new Map<string, number>();
  readonly types = new Map<string, string>();

  constructor(readonly text: string) {
    for (const line of text.split('\n')) {
      if (line.startsWith('# TYPE ')) {
        const [name, type] = line.slice(7).split(' ');
        this.types.set(name!, type!);
        continue;
      }
      if (line === '' || line.startsWith('#')) continue;
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
      if (match === null) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
      const labels = match[3] === undefined ? {} : parseLabels(match[3]);
      this.samples.set(key(match[1]!, labels), Number(match[4]));
    }
  }

  /** The sample's value; undefined when the scrape has no such sample. */
  value(name: string, labels: Record<string, string | number> = {}): number | undefined {
    return this.samples.get(key(name, labels));
  }

  /** Every sample of `name`, with its labels. */
  series(name: string): Array<{ labels: Record<string, string>; value: number }> {
    const result: Array<{ labels: Record<string, string>; value: number }> = [];
    for (const [sampleKey, value] of this.samples) {
      const brace = sampleKey.indexOf('{');
      if (sampleKey.slice(0, brace) !== name) continue;
      result.push({ labels: JSON.parse(sampleKey.slice(brace)) as Record<string, string>, value });
    }
    return result;
  }
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  return labels;
}

function key(name: string, labels: Record<string, string | number>): string {
  const sorted = Object.fromEntries(
    Object.entries(labels)
      .map(([label, value]) => [label, String(value)])
      .sort(([a], [b]) => (a! < b! ? -1 : 1)),
  );
  return `${name}${JSON.stringify(sorted)}`;
}
