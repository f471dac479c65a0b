/**
 * The priority-fee levels as Helius's open estimator computes them, checked against the
 * values its own tests give (priority_fee.rs: prices 0 to 100 give VeryHigh 96) and worked
 * out by hand for the series it combines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FeeSample, SlotFees } from '../../src/advice/block-fees';
import { feeLevels, percentile } from '../../src/advice/fee-levels';

const sample = (price: number, accounts: string[] = [], extra: Partial<FeeSample> = {}): FeeSample => ({
  price,
  accounts,
  vote: false,
  failed: false,
  tip: 0,
  priority: price,
  ...extra,
});
const slot = (n: number, samples: FeeSample[]): SlotFees => ({ slot: n, samples });
const PLAIN = { includeVote: false, emptySlotAsZero: false };

describe('fee levels', () => {
  it("interpolates percentiles as statrs does: 0 to 100 give 0, 25, 50, 75, 96 and 100 (the estimator's own check)", () => {
    const prices = Array.from({ length: 101 }, (_, i) => i);
    assert.deepEqual(
      feeLevels(
        [
          slot(
            1,
            prices.map((p) => sample(p)),
          ),
        ],
        [],
        PLAIN,
      ),
      {
        min: 0,
        low: 25,
        medium: 50,
        high: 75,
        veryHigh: 96,
        unsafeMax: 100,
      },
    );
    assert.equal(percentile([10, 20], 50), 15);
    assert.ok(Number.isNaN(percentile([], 50)));
  });

  it("answers for each level the largest of the global series and each account's, so an account never lowers it", () => {
    const hot = 'Hot1111111111111111111111111111111111111111';
    const window = [slot(2, [sample(10), sample(20), sample(5_000, [hot]), sample(7_000, [hot])]), slot(1, [sample(30), sample(40)])];
    const levels = feeLevels(window, [hot], PLAIN);
    assert.equal(levels.medium, 6_000, "the hot account's median, above the global one");
    assert.equal(levels.min, 5_000);
    const cold = feeLevels(window, ['Cold111111111111111111111111111111111111111'], PLAIN);
    assert.equal(cold.medium, feeLevels(window, [], PLAIN).medium, 'an account never written: the global series alone');
  });

  it('with emptySlotAsZero counts a slot where the account was not written as one zero in its series', () => {
    const account = 'Acct111111111111111111111111111111111111111';
    const window = [slot(4, [sample(0)]), slot(3, [sample(0)]), slot(2, [sample(0)]), slot(1, [sample(1_000, [account])])];
    assert.equal(feeLevels(window, [account], PLAIN).medium, 1_000);
    assert.equal(feeLevels(window, [account], { includeVote: false, emptySlotAsZero: true }).medium, 0);
    assert.equal(feeLevels(window, [account], { includeVote: false, emptySlotAsZero: true }).unsafeMax, 1_000);
  });

  it('leaves out failed transactions always and votes unless asked for; with no data every level is 0', () => {
    const window = [slot(1, [sample(100), sample(9_000, [], { failed: true }), sample(50_000, [], { vote: true })])];
    assert.equal(feeLevels(window, [], PLAIN).unsafeMax, 100);
    assert.equal(feeLevels(window, [], { includeVote: true, emptySlotAsZero: false }).unsafeMax, 50_000);
    assert.deepEqual(feeLevels([], ['x'], { includeVote: true, emptySlotAsZero: true }), {
      min: 0,
      low: 0,
      medium: 0,
      high: 0,
      veryHigh: 0,
      unsafeMax: 0,
    });
  });
});
