/**
 * The landing benchmarks run through a token launch: the seed they pick has its first burst
 * inside the sending, and the slots where the hot account took a large share of the blocks
 * are found again from what landed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { burstsOf } from '../../src/market/fee-weather';
import { hotRuns, weatherFor } from '../../bench/landing-weather';

describe("the landing benchmarks' weather", () => {
  it('picks the first seed whose first burst begins after a quarter of the sending and ends before its last tenth', () => {
    for (const [warm, send] of [
      [20, 75],
      [10, 20],
    ] as const) {
      const weather = weatherFor(warm, send, 400);
      const { from, to } = weather.sending;
      assert.equal(from, ((10 + warm) * 1000) / 400);
      assert.equal(to - from, Math.round((send * 1000) / 400));
      assert.deepEqual(burstsOf(weather.seed, weather.burst.start)[0], weather.burst, 'the weather of that seed');
      assert.ok(weather.burst.start >= from + (to - from) / 4, JSON.stringify(weather));
      assert.ok(weather.burst.start + weather.burst.slots <= to - (to - from) / 10, JSON.stringify(weather));
      for (let seed = 1; seed < weather.seed; seed++) {
        const first = burstsOf(seed, to)[0];
        const fits =
          first !== undefined &&
          first.start >= from + Math.round((to - from) / 4) &&
          first.start + first.slots <= to - Math.round((to - from) / 10);
        assert.ok(!fits, `seed ${seed} fits too, and comes first`);
      }
    }
  });

  it('finds the runs of slots where the hot account took at least the share asked, bridging a gap of one slot', () => {
    const shares = new Map([
      [10, 0.1],
      [11, 0.45],
      [12, 0.5],
      [13, 0.2],
      [14, 0.41],
      [15, 0.1],
      [16, 0.1],
      [17, 0.1],
      [18, 0.6],
    ]);
    assert.deepEqual(hotRuns(shares, 0.3), [
      { from: 11, to: 14 },
      { from: 18, to: 18 },
    ]);
    assert.deepEqual(hotRuns(shares, 0.9), []);
  });
});
