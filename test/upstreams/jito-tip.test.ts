/**
 * The tip a jito upstream counts in a transaction (`tipLamports`: system transfers to the
 * engine's tip accounts), on the benchmark's transfers: the landing step's Jito route sends
 * transfers that tip 1,000 lamports themselves, so that the gateway sends them `bundleOnly`
 * as Jito asks. Each transaction is decoded by @solana/web3.js too, an implementation not ours.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PublicKey, SystemInstruction, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { tipLamports } from '../../src/upstreams/jito';
import { validateTransaction } from '../../src/validation/validate-transaction';
import { newSigner, tippedTransferFactory, transferFactory } from '../../bench/signed-transactions';

const tipAccounts = new Set(JITO_TIP_ACCOUNTS);
const tipAccount = Buffer.from(bs58.decode(JITO_TIP_ACCOUNTS[3]!));
const blockhash = Buffer.alloc(32, 9);

function validated(base64: string) {
  const result = validateTransaction(base64, 'transaction');
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.value;
}

describe('tips counted by the jito upstream', () => {
  it("counts the benchmark's tipped transfer as tipping 1,000 lamports, each copy signed and distinct", () => {
    const payer = newSigner();
    const recipient = newSigner().publicKey;
    const next = tippedTransferFactory(payer, recipient, tipAccount, 1_000, blockhash, 2_000_000);
    const copies = [next(), next()];
    assert.notEqual(copies[0], copies[1]);
    for (const [i, base64] of copies.entries()) {
      assert.equal(tipLamports([validated(base64)], tipAccounts), 1_000);
      const tx = Transaction.from(Buffer.from(base64, 'base64'));
      assert.ok(tx.verifySignatures(), 'web3.js verifies the signature');
      assert.ok(tx.feePayer?.equals(new PublicKey(payer.publicKey)));
      const transfers = tx.instructions.map((ix) => {
        assert.ok(ix.programId.equals(SystemProgram.programId));
        return SystemInstruction.decodeTransfer(ix);
      });
      assert.deepEqual(
        transfers.map((t) => [t.fromPubkey.toBase58(), t.toPubkey.toBase58(), Number(t.lamports)]),
        [
          [bs58.encode(payer.publicKey), bs58.encode(recipient), 2_000_000 + i],
          [bs58.encode(payer.publicKey), JITO_TIP_ACCOUNTS[3], 1_000],
        ],
      );
    }
  });

  it('counts nothing in a transfer to an account that is not a tip account', () => {
    const payer = newSigner();
    const base64 = transferFactory(payer, newSigner().publicKey, blockhash)();
    assert.equal(tipLamports([validated(base64)], tipAccounts), 0);
    assert.equal(
      tipLamports([validated(tippedTransferFactory(payer, newSigner().publicKey, newSigner().publicKey, 1_000, blockhash)())], tipAccounts),
      0,
    );
  });
});
