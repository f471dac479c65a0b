/**
 * From a scheduling priority to a price: the lowest price giving a transaction of a given
 * shape that priority, by Agave's formula; a transaction without a price instruction is
 * shaped as it will be once it has one.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { priorityAndCost } from '../../src/leader/scheduler-priority';
import { seededWallet, transferWire } from '../../src/market/market-wires';
import { priceForPriority, shapeOfAccounts, shapeOfWire } from '../../src/advice/priority-price';
import { parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';

const parse = (bytes: Buffer) => parseWireTransaction(bytes) as WireTransaction;

describe('priority and price', () => {
  it('gives a market transfer exactly the priority asked at the price answered, and a lower one a unit of rounding under it', () => {
    const from = seededWallet('priority price test');
    const wire = (price: number) =>
      parse(transferWire({ from, to: crypto.randomBytes(32), lamports: 1, blockhash: crypto.randomBytes(32), price }));
    const shape = shapeOfWire(wire(0));
    assert.deepEqual([shape.cost, shape.unitLimit, shape.baseFee], [priorityAndCost(wire(0)).cost, 600, 5_000n]);
    for (const wanted of [1_300_000, 1_500_000, 5_000_000]) {
      const price = priceForPriority(wanted, shape);
      assert.ok(
        Number(priorityAndCost(wire(price)).priority) >= wanted,
        `${price} gives ${priorityAndCost(wire(price)).priority} < ${wanted}`,
      );
      assert.ok(Number(priorityAndCost(wire(price - 1)).priority) < wanted, 'and the lowest that does');
    }
    // What the base fee alone gives needs no priority fee.
    assert.equal(priceForPriority(1_000_000, shape), 0);
  });

  it('shapes a transaction without a price instruction as it will be with one: 3,000 more units and its data', () => {
    const payer = Keypair.generate();
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
    );
    tx.sign(payer);
    const wire = parse(tx.serialize());
    const before = priorityAndCost(wire).cost;
    const shape = shapeOfWire(wire);
    assert.equal(shape.unitLimit, 6_000);
    // 3,000 units, and 9 bytes more data: (12 + 9) / 4 = 5 units where 12 / 4 = 3 were.
    assert.equal(shape.cost, before + 3_000 + 2);
  });

  it('shapes a transaction known by its accounts: one signature, its write locks, its units and the default loaded-data limit', () => {
    assert.deepEqual(shapeOfAccounts(0, 600), { cost: 720 + 300 + 600 + 16_384, unitLimit: 600, baseFee: 5_000n });
    assert.equal(shapeOfAccounts(3, 200_000).cost, 720 + 900 + 200_000 + 16_384);
  });
});
