/** The landing report's fee figures: fees paid by nearest rank and their mean, overpayment's median and 90th percentile. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { feeReportOf } from '../../src/reports/fee-statistics';

describe('fee statistics', () => {
  it('gives the fees paid by nearest rank with their mean, and the overpayment at its median and 90th percentile', () => {
    const paid = Array.from({ length: 10 }, (_, i) => ({ keyId: 'k', atMs: 0, feeLamports: 5_000 + i * 1_000, overpayment: 1 + i / 10 }));
    assert.deepEqual(feeReportOf(paid), {
      samples: 10,
      feeLamports: { p50: 9_000, p99: 14_000, mean: 9_500 },
      overpayment: { p50: 1.4, p90: 1.8 },
    });
  });

  it('has nulls without samples', () => {
    assert.deepEqual(feeReportOf([]), {
      samples: 0,
      feeLamports: { p50: null, p99: null, mean: null },
      overpayment: { p50: null, p90: null },
    });
  });
});
