/** The calibration's figures: predictions counted per decile, observed shares, the Brier score and the largest error over full deciles. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calibrationOf } from '../../src/reports/calibration-statistics';

describe('calibration statistics', () => {
  it('counts each prediction in its decile, with the mean predicted, the share landed and the Brier score', () => {
    const scores = [
      ...Array.from({ length: 100 }, (_, i) => ({ keyId: 'k', atMs: 0, predicted: 0.9, landed: i < 80 })),
      ...Array.from({ length: 10 }, (_, i) => ({ keyId: 'k', atMs: 0, predicted: 0.15, landed: i < 1 })),
      { keyId: 'k', atMs: 0, predicted: 1, landed: true },
    ];
    const report = calibrationOf(scores, 8);
    assert.equal(report.samples, 111);
    assert.equal(report.withinSlots, 8);
    const ninth = report.deciles[9]!;
    assert.deepEqual([ninth.from, ninth.to, ninth.samples, ninth.predicted, ninth.observed], [0.9, 1, 101, 0.901, 0.802]);
    assert.deepEqual([report.deciles[1]!.samples, report.deciles[1]!.observed], [10, 0.1]);
    assert.equal(report.deciles[5]!.predicted, null);
    // Only the decile with 100 samples counts towards the largest error: |0.901 − 0.802| = 9.9 points.
    assert.equal(report.maxErrorPoints, 9.9);
    const brier = (80 * 0.01 + 20 * 0.81 + 1 * 0.7225 + 9 * 0.0225 + 0) / 111;
    assert.equal(report.brier, Math.round(brier * 10_000) / 10_000);
  });

  it('has no error and no score without samples', () => {
    const report = calibrationOf([], 8);
    assert.deepEqual([report.samples, report.brier, report.maxErrorPoints], [0, null, null]);
  });
});
