/**
 * Market ranks: a price's rank and the price of a rank invert each other, ties rank at their
 * middle, a price under the cheapest landed ranks below 0 by how far under it, a fee payer's
 * own transactions are not a market, a burst shows in the recent blocks at once, and an account with a market of its own (the hot account) lowers a transaction's
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

  it('ranks a price many paid at the middle of their ranks; votes, failed and tipped transactions are not the market', () => {
    const free = snapshotOf(
      [
        {
          slot: 3,
          samples: [...Array.from({ length: 50 }, () => sample(0)), ...Array.from({ length: 50 }, (_, i) => sample(1_000 + i))],
        },
        { slot: 2, samples: [sample(1e9, [], { vote: true }), sample(1e9, [], { failed: true }), sample(0, [], { tip: 50_000 })] },
      ],
      0,
    );
    // Nor tipped ones, which the auction placed: their tips are the tip market.
    assert.equal(free.transactions, 100);
    assert.equal(free.tipSamples, 1);
    const rank = rankIn(free.priorities!, 0);
    assert.ok(rank > 0.2 && rank < 0.3, String(rank));
    assert.equal(rankIn(free.priorities!, 1e9), 1);
  });

  it('ranks a price under the cheapest that landed below 0, by how far under it, and prices such a rank back', () => {
    const dear = snapshotOf([{ slot: 4, samples: prices.map((p) => sample(10_000 + p)) }], 0); // 10,000 … 20,000
    assert.equal(rankIn(dear.priorities!, 10_000), 0);
    assert.ok(Math.abs(rankIn(dear.priorities!, 9_999) - -0.0001) < 1e-12, 'one under the cheapest is just below 0, not 0');
    assert.equal(rankIn(dear.priorities!, 5_000), -0.5);
    assert.equal(rankIn(dear.priorities!, 0), -1);
    assert.equal(priceAt(dear.priorities!, -0.5), 5_000);
    assert.equal(priceAt(dear.priorities!, -2), 0, 'no lower than nothing');
    for (const value of [1, 2_500, 9_999]) assert.equal(priceAt(dear.priorities!, rankIn(dear.priorities!, value)), value);
  });

  it("does not take a fee payer's own transactions for a market of its account", () => {
    const payer = 'Payer111111111111111111111111111111111111111';
    const busy = snapshotOf(
      [{ slot: 5, samples: [...prices.map((p) => sample(p)), ...Array.from({ length: 40 }, () => sample(60_000, [payer]))] }],
      0,
    );
    assert.equal(busy.accounts.has(payer), false);
    assert.equal(priorityForRank(busy, 0, [payer]), priorityForRank(busy, 0, []), 'priced as the market, not one above its own last price');
  });

  it("prices a burst on an account from the recent blocks, before it fills the 20 blocks' market", () => {
    const hot = 'Hot1111111111111111111111111111111111111111';
    const block = (slot: number, hotPrice: number) => ({
      slot,
      samples: [...prices.map((p) => sample(p)), ...Array.from({ length: 30 }, (_, i) => sample(hotPrice + i, [`payer ${i}`, hot]))],
    });
    // Newest first: a burst at 200,000 in the last two blocks, 10,000 in the 18 before.
    const window = Array.from({ length: 20 }, (_, i) => block(100 - i, i < 2 ? 200_000 : 10_000));
    const snapshot = snapshotOf(window, 0);
    assert.ok(priceAt(snapshot.accounts.get(hot)!, 0) < 11_000, "the 20 blocks' cheapest is from before the burst");
    assert.ok(priorityForRank(snapshot, 0, [hot]) >= 200_000, 'the advice is priced in the burst');
    assert.ok(transactionRank(snapshot, 100_000, [hot])! < 0, 'a price under the burst ranks under its cheapest');
    assert.ok(priorityForRank(snapshot, 0, []) < 11_000, 'the rest of the market is not moved');
  });

  it("ranks a transaction writing the hot account by the hot account's dearer market, and prices its advice from it", () => {
    const hot = 'Hot1111111111111111111111111111111111111111';
    const busy = snapshotOf(
      [
        {
          slot: 5,
          samples: [
            ...prices.map((p) => sample(p)),
            ...Array.from({ length: 40 }, (_, i) => sample(50_000 + i * 1_000, [`payer ${i}`, hot])),
          ],
        },
      ],
      0,
    );
    assert.ok(transactionRank(busy, 9_000, [hot])! < transactionRank(busy, 9_000, [])!);
    assert.ok(
      Math.abs(transactionRank(busy, 9_000, [hot])! - (9_000 / 50_000 - 1)) < 1e-9,
      'under the hot market: 82 % below its cheapest',
    );
    assert.ok(priorityForRank(busy, 0.5, [hot]) >= 50_000);
    assert.ok(priorityForRank(busy, 0.5, []) < 50_000);
  });
});
