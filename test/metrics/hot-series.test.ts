/**
 * The hot path's histogram series and counters (metrics/hot-series.ts) against prom-client's
 * own `observe` and `inc` of the same values: the exposition must be the same, to the bucket.
 * A histogram's series are added to prom-client's internal record of the series, so this is
 * also what fails if an upgrade of prom-client changes that record.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import client from 'prom-client';
import { collectHotCounts, collectHotSeries, hotCount, hotSeries } from '../../src/metrics/hot-series';

const BUCKETS = [0.001, 0.01, 0.1, 1];

function histograms(name: string) {
  const registry = new client.Registry();
  const hot = new client.Histogram({
    name: `${name}_hot`,
    help: 'h',
    labelNames: ['path'],
    buckets: BUCKETS,
    registers: [registry],
    collect: collectHotSeries,
  });
  const plain = new client.Histogram({ name: `${name}_plain`, help: 'h', labelNames: ['path'], buckets: BUCKETS, registers: [registry] });
  return { registry, hot, plain };
}

/**
 * The exposition of `name_hot` and `name_plain`, with the names made equal, line by line in
 * order; a sum rounded to 9 digits (added at once here, one by one by prom-client: the last
 * bit may differ).
 */
async function both(registry: client.Registry, name: string): Promise<[string, string]> {
  const text = await registry.metrics();
  const of = (suffix: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name}_${suffix}`))
      .map((line) => line.replace(`${name}_${suffix}`, name))
      .map((line) => (line.includes('_sum{') ? line.replace(/ (\S+)$/, (_, value: string) => ` ${Number(value).toPrecision(9)}`) : line))
      .sort() // series in the order they were made, which differs
      .join('\n');
  return [of('hot'), of('plain')];
}

describe('hot series: histograms and counters counted in plain numbers, exposed as prom-client would', () => {
  it('exposes the same buckets, sum and count as prom-client observing the same values, across collections', async () => {
    const { registry, hot, plain } = histograms('h1');
    const root = hotSeries(hot, BUCKETS, { path: '/' });
    const batch = hotSeries(hot, BUCKETS, { path: '/submit-batch' });
    // Values on the bounds (le is inclusive), between them, above every bound, zero.
    const values = [0, 0.001, 0.0011, 0.01, 0.05, 0.1, 0.5, 1, 1.5, 30];
    for (let round = 0; round < 3; round++) {
      for (const [i, value] of values.entries()) {
        const labels = { path: i % 3 === 0 ? '/submit-batch' : '/' };
        (labels.path === '/' ? root : batch).observe(value * (round + 1));
        plain.observe(labels, value * (round + 1));
      }
      const [a, b] = await both(registry, 'h1');
      assert.equal(a, b, `after round ${round}`);
      assert.match(a, /h1_count\{path="\/"\} \d+/);
    }
  });

  it('adds to what prom-client observed in the same series, makes its series visible before the first observation, and survives a reset', async () => {
    const { registry, hot, plain } = histograms('h2');
    const series = hotSeries(hot, BUCKETS, { path: '/' });
    const [empty] = await both(registry, 'h2');
    assert.match(empty, /h2_count\{path="\/"\} 0/);
    hot.observe({ path: '/' }, 0.05); // another part of the gateway, through prom-client
    plain.observe({ path: '/' }, 0.05);
    series.observe(0.002);
    plain.observe({ path: '/' }, 0.002);
    assert.deepEqual(...(await both(registry, 'h2')));
    hot.reset();
    plain.reset();
    series.observe(2);
    plain.observe({ path: '/' }, 2);
    assert.deepEqual(...(await both(registry, 'h2')));
  });

  it('counts as prom-client does, by labels', async () => {
    const registry = new client.Registry();
    const hot = new client.Counter({ name: 'c_hot', help: 'c', labelNames: ['outcome'], registers: [registry], collect: collectHotCounts });
    const plain = new client.Counter({ name: 'c_plain', help: 'c', labelNames: ['outcome'], registers: [registry] });
    const ok = hotCount(hot, { outcome: 'ok' });
    const error = hotCount(hot, { outcome: 'error' });
    plain.inc({ outcome: 'ok' }, 0);
    plain.inc({ outcome: 'error' }, 0);
    for (let i = 0; i < 7; i++) {
      ok.inc();
      plain.inc({ outcome: 'ok' });
      if (i % 3 === 0) {
        error.inc();
        plain.inc({ outcome: 'error' });
      }
      if (i % 2 === 0) {
        const text = await registry.metrics();
        const lines = (name: string) =>
          text
            .split('\n')
            .filter((line) => line.startsWith(`${name}{`))
            .map((line) => line.slice(name.length));
        assert.deepEqual(lines('c_hot'), lines('c_plain'));
      }
    }
    const final = await registry.getSingleMetric('c_hot')!.get();
    assert.deepEqual(
      final.values.map((v) => [v.labels.outcome, v.value]),
      [
        ['ok', 7],
        ['error', 3],
      ],
    );
  });
});
