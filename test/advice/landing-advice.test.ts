/**
 * The landing advice's answer against a market of its own making: a price strictly above the
 * market's priority at the advised rank, so that a transaction is never level with what it
 * must pass (a leader breaks ties by arrival, the later first).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import type { SlotFees } from '../../src/advice/block-fees';
import { LandingAdvice } from '../../src/advice/landing-advice';
import type { RecentFees } from '../../src/advice/recent-fees';
import { priorityAndCost } from '../../src/leader/scheduler-priority';
import { seededWallet, transferWire } from '../../src/market/market-wires';
import { parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';

const from = seededWallet('landing advice test');
const wire = (price: number) => transferWire({ from, to: crypto.randomBytes(32), lamports: 1, blockhash: Buffer.alloc(32, 7), price });
const priorityOf = (bytes: Buffer) => Number(priorityAndCost(parseWireTransaction(bytes) as WireTransaction).priority);
const sample = (priority: number) => ({ price: 0, accounts: [], vote: false, failed: false, tip: 0, priority });

/** The advice's answer for `wire(0)` at `probability` within 8 slots, in a market of one block of these priorities and no outcomes. */
async function adviseIn(priorities: readonly number[], probability: number) {
  const market: SlotFees[] = [{ slot: 10, samples: priorities.map(sample) }];
  const recent = { window: async () => market, fresh: async () => market } as unknown as RecentFees;
  const advice = new LandingAdvice(
    recent,
    async () => [],
    () => 1_000_000,
  );
  try {
    const answer = await advice.estimate([{ transaction: wire(0).toString('base64'), probability, withinSlots: 8 }]);
    assert.ok(answer.ok);
    return answer.value;
  } finally {
    advice.close();
  }
}

describe('landing advice', () => {
  it('advises a price above a market of free transfers, never level with them', async () => {
    const free = priorityOf(wire(0));
    const { microLamportsPerComputeUnit, evidence } = await adviseIn(Array(100).fill(free), 0.05);
    assert.equal(evidence.priority, free, 'the market is all one priority');
    assert.ok(microLamportsPerComputeUnit > 0, 'a price of 0 would be level with the whole market');
    assert.ok(priorityOf(wire(microLamportsPerComputeUnit)) > free);
    // The lowest such price: one lamport of priority fee, which Agave's rounding up gives 600 units at 1 micro-lamport each.
    assert.equal(microLamportsPerComputeUnit, 1);
  });

  it('answers the chance at the price it gives, which the fee rounded to whole lamports lifts above the rank advised', async () => {
    // Half the market free, half paying 100 lamports of priority fee: the price for rank 0.3 (free, plus one) is a
    // priority fee of one lamport, which ranks just under the middle of the market, not at 0.3.
    const [free, dear] = [priorityOf(wire(0)), priorityOf(wire(Math.ceil((100 * 1e6) / 600)))];
    const answer = await adviseIn([...Array(50).fill(free), ...Array(50).fill(dear)], 0.3);
    assert.equal(answer.microLamportsPerComputeUnit, 1);
    assert.ok(Math.abs(answer.evidence.marketRank - 0.3) < 0.01, 'advised at the rank for 0.3');
    // With no outcomes the curve is the market's percentile: the chance at rank 0.49 is about 0.49.
    assert.ok(answer.probability > 0.45 && answer.probability < 0.5, `answered ${answer.probability}, not 0.3`);
  });
});
