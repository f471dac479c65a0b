/** Agave's scheduling priority (transaction_priority.rs): the leader's reward × 1,000,000 / (cost + 1), worked out by hand. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { transactionCost } from '../../src/leader/cost-model';
import { leaderReward, priorityAndCost, schedulingPriority } from '../../src/leader/scheduler-priority';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';

const payer = Keypair.generate();
function wireOf(...instructions: TransactionInstruction[]): WireTransaction {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: new PublicKey(Buffer.alloc(32, 3)).toBase58() }).add(
    ...instructions,
  );
  tx.sign(payer);
  const wire = parseWireTransaction(tx.serialize());
  assert.ok(!isWireDefect(wire));
  return wire;
}
const transfer = () => SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 });
const priced = (microLamports: number, units = 10_000) =>
  wireOf(ComputeBudgetProgram.setComputeUnitLimit({ units }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports }), transfer());

describe("Agave's scheduling priority", () => {
  it('the leader keeps the priority fee and half the base fee (the burn rounded down)', () => {
    assert.equal(leaderReward({ baseFee: 5_000n, priorityFee: 0n }), 2_500n);
    assert.equal(leaderReward({ baseFee: 5_001n, priorityFee: 7n }), 7n + 2_501n);
  });

  it('a priced transfer: priority fee ceil(price × limit / 1,000,000), reward × 1,000,000 / (cost + 1)', () => {
    const wire = priced(1_001, 10_000); // 10,010,000 micro-lamports: 11 lamports rounded up
    const cost = transactionCost(wire).total;
    assert.equal(cost, 720 + 600 + Math.floor((5 + 9 + 12) / 4) + 10_000 + 16_384);
    assert.deepEqual(priorityAndCost(wire), { priority: ((11n + 2_500n) * 1_000_000n) / BigInt(cost + 1), cost });
  });

  it('orders by reward per unit: a higher price ranks higher; at the same fee, the cheaper transaction ranks higher', () => {
    assert.ok(priorityAndCost(priced(2_000)).priority > priorityAndCost(priced(1_000)).priority);
    assert.ok(schedulingPriority(10_000n, 20_000) > schedulingPriority(10_000n, 200_000));
    // No price at all still earns the leader its half of the base fee.
    assert.equal(
      priorityAndCost(wireOf(transfer())).priority,
      (2_500n * 1_000_000n) / BigInt(transactionCost(wireOf(transfer())).total + 1),
    );
  });
});
