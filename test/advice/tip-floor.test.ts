/**
 * The tip floor in Jito's shape from the tips of landed bundles: percentiles of the last five
 * minutes in SOL, the minute as its time, and the EMA of past minutes' medians.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TipFloor } from '../../src/advice/tip-floor';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);

describe('tip floor', () => {
  it("answers Jito's fields in SOL over the last five minutes, stamped with the current minute", () => {
    const floor = new TipFloor();
    for (let i = 0; i <= 100; i++) floor.record(i * 1_000, T0 + 30_000);
    const entry = floor.entry(T0 + 45_000)!;
    assert.deepEqual(Object.keys(entry), [
      'time',
      'landed_tips_25th_percentile',
      'landed_tips_50th_percentile',
      'landed_tips_75th_percentile',
      'landed_tips_95th_percentile',
      'landed_tips_99th_percentile',
      'ema_landed_tips_50th_percentile',
    ]);
    assert.equal(entry.time, '2026-11-27T12:00:00Z');
    assert.equal(entry.landed_tips_50th_percentile, 0.00005);
    // Interpolated (type 8): 24,666.7 lamports, as Helius's levels are.
    assert.ok(Math.abs(entry.landed_tips_25th_percentile - 0.0000246667) < 1e-10);
    assert.ok(Math.abs(entry.landed_tips_99th_percentile - 0.0000996533) < 1e-10);
    assert.equal(entry.ema_landed_tips_50th_percentile, 0.00005, 'no past minute yet: the current median');
  });

  it("forgets tips older than five minutes and moves the EMA by a fifth towards each past minute's median", () => {
    const floor = new TipFloor();
    floor.record(10_000, T0);
    floor.record(20_000, T0 + MINUTE);
    const entry = floor.entry(T0 + 2 * MINUTE)!;
    // 0.2 x 20,000 + 0.8 x 10,000 = 12,000 lamports.
    assert.ok(Math.abs(entry.ema_landed_tips_50th_percentile - 0.000012) < 1e-12);
    assert.equal(floor.entry(T0 + 5 * MINUTE)!.landed_tips_50th_percentile, 0.00002, 'the first minute has left the window');
    assert.equal(floor.entry(T0 + 6 * MINUTE), null, 'nothing landed in the last five minutes');
  });
});
