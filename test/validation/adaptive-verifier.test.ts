import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createAdaptiveVerifier } from '../../src/validation/adaptive-verifier';
import type { SignatureVerifier } from '../../src/validation/transaction-validator';
import { verifyTransactionSignatures } from '../../src/validation/verify-signatures';
import { parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';
import { createWorkerVerifier } from '../../src/validation/worker-verifier';
import { fakeLoad } from '../helpers/fake-load';

function transfers(count: number): WireTransaction[] {
  const payer = Keypair.generate();
  return Array.from({ length: count }, (_, i) => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 3)) }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: payer.publicKey, lamports: i + 1 }),
    );
    tx.sign(payer);
    const bytes = tx.serialize();
    if (i % 2 === 1) bytes[bytes.length - 1]! ^= 1; // message changed after signing
    return parseWireTransaction(bytes) as WireTransaction;
  });
}

describe('adaptive signature verification', () => {
  it('verifies inline while the thread is idle and on the workers while it is busy, with the same answers', async () => {
    const load = fakeLoad(0);
    let onWorkers = 0;
    const workers = createWorkerVerifier(1);
    const counting: SignatureVerifier = { verify: (wire) => (onWorkers++, workers.verify(wire)), close: () => workers.close() };
    const verifier = createAdaptiveVerifier(counting, load);
    try {
      const wires = transfers(40);
      const idle = await Promise.all(wires.map((wire) => verifier.verify(wire)));
      assert.equal(onWorkers, 0, 'idle: nothing went to the workers');
      load.busy = 0.9;
      load.sample();
      assert.equal(verifier.inline, false);
      const busy = await Promise.all(wires.map((wire) => verifier.verify(wire)));
      assert.equal(onWorkers, wires.length, 'busy: everything went to the workers');
      wires.forEach((wire, i) => {
        const expected = verifyTransactionSignatures(wire);
        assert.deepEqual(idle[i], expected);
        assert.deepEqual(busy[i], expected);
        assert.equal(expected.valid, i % 2 === 0);
      });
    } finally {
      await verifier.close();
    }
  });
});
