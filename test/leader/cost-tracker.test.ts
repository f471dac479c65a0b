/** A block's cost tracker (Agave's cost_tracker.rs): the block's limit, the per-account limit, and the order of the checks. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGAVE_LIMITS, CostTracker } from '../../src/leader/cost-tracker';

describe("a block's cost tracker", () => {
  it("holds Agave's limits by default: 60,000,000 a block, 24,000,000 an account", () => {
    assert.deepEqual(new CostTracker().limits, AGAVE_LIMITS);
    assert.deepEqual(AGAVE_LIMITS, { blockUnits: 60_000_000, accountUnits: 24_000_000 });
  });

  it('packs until the block is full, exactly to its limit, and refuses the next without changing anything', () => {
    const tracker = new CostTracker({ blockUnits: 100_000, accountUnits: 60_000 });
    for (let i = 0; i < 4; i += 1) assert.equal(tracker.tryAdd(25_000, [`account-${i}`]), null);
    assert.equal(tracker.units, 100_000);
    assert.equal(tracker.tryAdd(1, ['other']), 'WouldExceedBlockMaxLimit');
    assert.equal(tracker.units, 100_000);
    assert.equal(tracker.accountUnits('other'), 0);
  });

  it('binds on a hot account: its writers stop at the per-account limit while others still fit', () => {
    const tracker = new CostTracker({ blockUnits: 1_000_000, accountUnits: 50_000 });
    assert.equal(tracker.tryAdd(20_000, ['hot', 'a']), null);
    assert.equal(tracker.tryAdd(20_000, ['hot', 'b']), null);
    assert.equal(tracker.tryAdd(20_000, ['c', 'hot']), 'WouldExceedAccountMaxLimit');
    assert.equal(tracker.accountUnits('hot'), 40_000);
    assert.equal(tracker.accountUnits('c'), 0);
    assert.equal(tracker.tryAdd(20_000, ['c']), null);
    assert.equal(tracker.units, 60_000);
  });

  it("checks in Agave's order: the block first, then the transaction against the account limit, then its accounts", () => {
    const tracker = new CostTracker({ blockUnits: 100, accountUnits: 50 });
    assert.equal(tracker.wouldFit(101, []), 'WouldExceedBlockMaxLimit');
    assert.equal(tracker.wouldFit(60, []), 'WouldExceedAccountMaxLimit');
    assert.equal(tracker.wouldFit(50, ['x']), null);
  });
});
