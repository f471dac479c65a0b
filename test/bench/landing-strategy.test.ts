/** bench:strategy reads each gateway's sends from its /metrics page with the project's own Prometheus text parser. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sumMetric } from '../../bench/landing-strategy';

describe('bench:strategy metrics', () => {
  it('sums one metric over the label sets asked for, and nothing of another metric', () => {
    const page = [
      '# HELP slipway_tpu_sends_total x',
      'slipway_tpu_sends_total{upstream="leaders",leader="A}b",outcome="queued"} 3',
      'slipway_tpu_sends_total{upstream="leaders",leader="C",outcome="queued"} 4',
      'slipway_tpu_sends_total{upstream="leaders",leader="C",outcome="refused"} 5',
      'slipway_tpu_sends_total_other{outcome="queued"} 100',
    ].join('\n');
    assert.equal(
      sumMetric(page, 'slipway_tpu_sends_total', (labels) => labels.outcome === 'queued'),
      7,
    );
    assert.equal(sumMetric(page, 'slipway_tpu_sends_total'), 12);
    assert.equal(sumMetric(page, 'slipway_missing'), 0);
  });
});
