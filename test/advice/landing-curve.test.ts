/**
 * The landing curve: non-decreasing in rank whatever the outcomes, the market's own percentile
 * with no outcomes (the prior), the rank where outcomes start landing once they are many, and
 * a prediction at the advised rank equal to the chance asked for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitCurve, probabilityAt, rankFor } from '../../src/advice/landing-curve';

/** A generator of numbers in [0, 1), seeded: the same outcomes on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

describe('landing curve', () => {
  it('with no outcomes advises the market percentile equal to the chance asked for', () => {
    const curve = fitCurve([]);
    assert.equal(curve.outcomes, 0);
    for (const p of [0.1, 0.5, 0.9]) assert.ok(Math.abs(rankFor(curve, p).rank - p) < 0.03, `rank for ${p}: ${rankFor(curve, p).rank}`);
  });

  it('counts each outcome by its weight: old misses weighed down give way to recent landings at the same rank', () => {
    const old = Array.from({ length: 200 }, () => ({ rank: 0.2, landed: false, weight: 1 / 16 }));
    const recent = Array.from({ length: 100 }, () => ({ rank: 0.2, landed: true }));
    assert.equal(probabilityAt(fitCurve([...old, ...recent]), 0.2), 100 / 112.5);
    assert.equal(probabilityAt(fitCurve([...old.map(({ rank, landed }) => ({ rank, landed })), ...recent]), 0.2), 1 / 3);
    // A block's rank is the weighted mean of its outcomes'.
    const pooled = fitCurve([
      { rank: 0.1, landed: true, weight: 3 },
      { rank: 0.5, landed: false, weight: 1 },
      ...Array.from({ length: 60 }, () => ({ rank: 0.9, landed: true })),
    ]);
    assert.equal(pooled.points[0]!.rank, (0.1 * 3 + 0.5) / 4);
    assert.equal(pooled.points[0]!.probability, 0.75);
  });

  it('is non-decreasing in rank even when the outcomes are not', () => {
    const random = seeded(7);
    const outcomes = Array.from({ length: 500 }, () => ({ rank: random(), landed: random() < 0.5 }));
    const curve = fitCurve(outcomes);
    for (let i = 1; i < curve.points.length; i++) assert.ok(curve.points[i]!.probability > curve.points[i - 1]!.probability);
    let last = -1;
    for (let r = 0; r <= 1; r += 0.01) {
      const p = probabilityAt(curve, r);
      assert.ok(p >= last - 1e-12, `at ${r}: ${p} after ${last}`);
      last = p;
    }
  });

  it('learns where outcomes start landing: with 2,000 outcomes landing above rank 0.6 (95 %) the advice for 0.9 is just above 0.6', () => {
    const random = seeded(11);
    const outcomes = Array.from({ length: 2_000 }, () => {
      const rank = random();
      return { rank, landed: rank > 0.6 ? random() < 0.95 : random() < 0.05 };
    });
    const curve = fitCurve(outcomes);
    const advice = rankFor(curve, 0.9);
    assert.ok(advice.reachable);
    assert.ok(advice.rank > 0.58 && advice.rank < 0.68, `rank ${advice.rank}`);
    assert.ok(Math.abs(probabilityAt(curve, advice.rank) - 0.9) < 1e-9, 'the prediction at the advised rank is the chance asked for');
    assert.ok(probabilityAt(curve, 0.3) < 0.1);
  });

  it('follows a sharp rise near the bottom of the market: half landing below rank 0.1 and all above, the advice for 0.85 is at 0.1, not half-way up', () => {
    const random = seeded(5);
    const outcomes = Array.from({ length: 2_000 }, () => {
      const rank = random();
      return { rank, landed: rank > 0.1 || random() < 0.5 };
    });
    const curve = fitCurve(outcomes);
    const advice = rankFor(curve, 0.85);
    assert.ok(advice.rank > 0.08 && advice.rank < 0.12, `rank ${advice.rank}`);
    assert.equal(probabilityAt(curve, 0.4), 1, 'where everything landed the chance is 1, not an interpolation towards it');
    assert.ok(Math.abs(probabilityAt(curve, advice.rank) - 0.85) < 1e-9, 'the prediction at the advised rank is the chance asked for');
  });

  it('advises under the cheapest landed (a rank below 0) for a low chance when prices under it never landed, and as low as under-priced ones that landed', () => {
    const random = seeded(3);
    const outcomes = Array.from({ length: 1_000 }, (_, i) =>
      i % 2 === 0 ? { rank: -0.2 + random() * 0.01, landed: false } : { rank: random(), landed: random() < 0.99 },
    );
    const curve = fitCurve(outcomes);
    const low = rankFor(curve, 0.05);
    assert.ok(low.rank < 0 && low.rank > -0.19, `rank ${low.rank}: between the never-landed and the cheapest landed`);
    assert.ok(Math.abs(probabilityAt(curve, low.rank) - 0.05) < 1e-9);
    const cheapLanded = fitCurve(Array.from({ length: 100 }, (_, i) => ({ rank: -0.3 + i / 100, landed: true })));
    assert.deepEqual([rankFor(cheapLanded, 0.9).rank, rankFor(cheapLanded, 0.9).probability], [-0.3, 1]);
  });

  it('leaves the prior out once 50 outcomes are known: all of them landing, it advises the bottom of the market for any chance', () => {
    const landing = (n: number) => Array.from({ length: n }, (_, i) => ({ rank: 0.1 + (0.8 * i) / n, landed: true }));
    const few = fitCurve(landing(49));
    assert.equal(few.priorWeight, 20);
    assert.ok(rankFor(few, 0.05).rank < 0.1, 'with the prior, the lowest ranks are its own');
    assert.ok(probabilityAt(few, 0.02) < 0.5);
    const enough = fitCurve(landing(50));
    assert.equal(enough.priorWeight, 0);
    for (const p of [0.05, 0.5, 0.99]) assert.deepEqual([rankFor(enough, p).rank, rankFor(enough, p).probability], [0, 1]);
    assert.equal(probabilityAt(enough, 0), 1);
  });

  it('says when no rank reaches the chance asked for, and answers the top of the market with the best chance it has', () => {
    const outcomes = Array.from({ length: 1_000 }, (_, i) => ({ rank: i / 1_000, landed: i % 2 === 0 }));
    const advice = rankFor(fitCurve(outcomes), 0.95);
    assert.equal(advice.reachable, false);
    assert.equal(advice.rank, 1);
    assert.ok(advice.probability < 0.95 && advice.probability > 0.4, String(advice.probability));
  });
});
