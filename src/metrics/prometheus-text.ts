/**
 * Reads Prometheus's text format back into samples (for `bin/slipway status`). Written
 * here: the parser on npm merges a histogram's label sets and drops its sum and count; a
 * test checks this one against prom-client's own JSON view of the same registry.
 */
export interface Sample {
  /** The series name as written (`…_bucket`, `…_sum`, `…_count` for histograms). */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL))
      labels[key!] = raw!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: parseValue(match[3]!) });
  }
  return samples;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** The value at quantile `q` (0..1) of a histogram's cumulative buckets, by linear interpolation within its bucket (as Prometheus's histogram_quantile). */
export function histogramQuantile(q: number, buckets: readonly { le: number; count: number }[]): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let previous = { le: 0, count: 0 };
  for (const bucket of sorted) {
    if (bucket.count >= rank) {
      if (bucket.le === Infinity) return previous.le;
      const within = bucket.count - previous.count;
      return within === 0 ? bucket.le : previous.le + ((bucket.le - previous.le) * (rank - previous.count)) / within;
    }
    previous = bucket;
  }
  return previous.le;
}
