/**
 * Market ranks: a price's rank and the price of a rank invert each other, ties rank at their
 * middle, and an account with a market of its own (the hot account) lowers a transaction's
 * rank and raises the price advised for it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FeeSample } from '../../src/advice/block-fees';
import { priceAt, priorityForRank, rankIn, snapshotOf, transactionRank } from '../../src/advice/market-ranks';

const sample = (price: number, accounts: string[] = [], extra: Partial<FeeSample> = {}): FeeSample => ({
  price,
  accounts,
  vote: false,
  failed: false,
  tip: 0,
  priority: price,
  ...extra,
});

describe('market ranks', () => {
  const prices = Array.from({ length: 101 }, (_, i) => i * 100); // 0, 100, …, 10,000
  const snapshot = snapshotOf([{ slot: 9, samples: prices.map((p) => sample(p)) }], 1_000);

  it('ranks a price by where it stands among the landed ones, and prices a rank back', () => {
    assert.equal(snapshot.transactions, 101);
    assert.ok(Math.abs(rankIn(snapshot.priorities!, 5_000) - 0.5) < 0.001);
    assert.ok(Math.abs(rankIn(snapshot.priorities!, 5_050) - 0.505) < 0.001);
    assert.equal(rankIn(snapshot.priorities!, 20_000), 1);
    // Percentiles interpolate as the fee levels do (type 8): within one step of the plain rank.
    assert.ok(Math.abs(priceAt(snapshot.priorities!, 0.9) - 9_000) <= 100, String(priceAt(snapshot.priorities!, 0.9)));
    assert.ok(priceAt(snapshot.priorities!, 0.905) > priceAt(snapshot.priorities!, 0.9));
    for (const rank of [0.13, 0.5, 0.77])
      assert.ok(Math.abs(rankIn(snapshot.priorities!, priceAt(snapshot.priorities!, rank)) - rank) < 0.001);
  });

  it('ranks a price many paid at the middle of their ranks; votes and failed transactions are not the market', () => {
    const free = snapshotOf(
      [
        {
          slot: 3,
          samples: [...Array.from({ length: 50 }, () => sample(0)), ...Array.from({ length: 50 }, (_, i) => sample(1_000 + i))],
        },
        { slot: 2, samples: [sample(1e9, [], { vote: true }), sample(1e9, [], { failed: true })] },
      ],
      0,
    );
    assert.equal(free.transactions, 100);
    const rank = rankIn(free.priorities!, 0);
    assert.ok(rank > 0.2 && rank < 0.3, String(rank));
    assert.equal(rankIn(free.priorities!, 1e9), 1);
  });

  it("ranks a transaction writing the hot account by the hot account's dearer market, and prices its advice from it", () => {
    const hot = 'Hot1111111111111111111111111111111111111111';
    const busy = snapshotOf(
      [{ slot: 5, samples: [...prices.map((p) => sample(p)), ...Array.from({ length: 40 }, (_, i) => sample(50_000 + i * 1_000, [hot]))] }],
      0,
    );
    assert.ok(transactionRank(busy, 9_000, [hot])! < transactionRank(busy, 9_000, [])!);
    assert.equal(transactionRank(busy, 9_000, [hot]), 0);
    assert.ok(priorityForRank(busy, 0.5, [hot]) >= 50_000);
    assert.ok(priorityForRank(busy, 0.5, []) < 50_000);
  });
});
