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

describe('landing advice', () => {
  it('advises a price above a market of free transfers, never level with them', async () => {
    const free = priorityOf(wire(0));
    const market: SlotFees[] = [
      {
        slot: 10,
        samples: Array.from({ length: 100 }, () => ({ price: 0, accounts: [], vote: false, failed: false, tip: 0, priority: free })),
      },
    ];
    const recent = { window: async () => market, fresh: async () => market } as unknown as RecentFees;
    const advice = new LandingAdvice(
      recent,
      async () => [],
      () => 1_000_000,
    );
    try {
      const answer = await advice.estimate([{ transaction: wire(0).toString('base64'), probability: 0.05, withinSlots: 8 }]);
      assert.ok(answer.ok);
      const { microLamportsPerComputeUnit, evidence } = answer.value;
      assert.equal(evidence.priority, free, 'the market is all one priority');
      assert.ok(microLamportsPerComputeUnit > 0, 'a price of 0 would be level with the whole market');
      assert.ok(priorityOf(wire(microLamportsPerComputeUnit)) > free);
      // The lowest such price: one lamport of priority fee, which Agave's rounding up gives 600 units at 1 micro-lamport each.
      assert.equal(microLamportsPerComputeUnit, 1);
    } finally {
      advice.close();
    }
  });
});
