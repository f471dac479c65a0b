/**
 * The fee advice reads a block as a node answers it: each transaction's price, the accounts
 * it writes, whether it failed; a block of another shape is refused saying what is wrong.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ComputeBudgetProgram, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { BLOCK_CONFIG, slotFeesOf } from '../../src/advice/block-fees';
import { LocalLedger } from '../../src/ledger/local-ledger';
import { LEDGER_RPC_METHODS } from '../../src/ledger/ledger-rpc';
import { validateTransaction } from '../../src/validation/validate-transaction';

describe('block fees', () => {
  it("reads each landed transaction's price and written accounts from getBlock's base64 answer", () => {
    const ledger = LocalLedger.open({ slotMs: 1_000 });
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    ledger.airdrop(payer.publicKey.toBytes(), BigInt(LAMPORTS_PER_SOL));
    ledger.advanceSlot();
    const slot = ledger.currentSlot;
    const send = (microLamports: number | undefined, lamports: number) => {
      const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: ledger.latestBlockhash().blockhash });
      if (microLamports !== undefined) tx.add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports }));
      tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }));
      tx.sign(payer);
      const validated = validateTransaction(tx.serialize().toString('base64'), '');
      assert.ok(validated.ok);
      return ledger.execute(validated.value);
    };
    send(7_500, 1_000_000);
    send(undefined, 2_000_000);
    assert.notEqual(send(1, 10 * LAMPORTS_PER_SOL).err, null, 'more than it has: fails on chain');
    ledger.advanceSlot(); // the block is served once its slot ended
    const block = (LEDGER_RPC_METHODS.getBlock!(ledger, [slot, BLOCK_CONFIG]) as { result: unknown }).result;
    const fees = slotFeesOf(slot, block);
    assert.ok(typeof fees !== 'string', String(fees));
    assert.deepEqual(
      fees.samples.map((s) => [s.price, s.failed, s.vote]),
      [
        [7_500, false, false],
        [0, false, false],
        [1, true, false],
      ],
    );
    assert.deepEqual(fees.samples[0]!.accounts, [payer.publicKey.toBase58(), to.toBase58()]);
  });

  it('takes a skipped slot (null) as empty and refuses a block of another shape, saying what is wrong', () => {
    assert.deepEqual(slotFeesOf(5, null), { slot: 5, samples: [] });
    assert.equal(slotFeesOf(5, {}), 'block 5 has no transactions list');
    assert.equal(slotFeesOf(5, { transactions: [{ transaction: { message: {} } }] }), 'block 5: a transaction is not in base64');
    assert.match(
      slotFeesOf(5, { transactions: [{ transaction: ['AAAA', 'base64'] }] }) as string,
      /^block 5: a transaction does not parse: /,
    );
  });
});
