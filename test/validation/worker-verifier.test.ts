import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createWorkerVerifier } from '../../src/validation/worker-verifier';
import { verifyTransactionSignatures } from '../../src/validation/verify-signatures';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';

describe('signature verification on worker threads (cross-checked against the inline verifier)', () => {
  // One thread: 400 transactions at once are more than its 256 slots, so some wait their turn.
  for (const threads of [1, 2]) {
    it(`agrees on valid, forged and unsigned transactions sent all at once (${threads} thread${threads > 1 ? 's' : ''})`, async () => {
      const verifier = createWorkerVerifier(threads);
      try {
        const payer = Keypair.generate();
        const other = Keypair.generate();
        const wires: WireTransaction[] = [];
        for (let i = 0; i < 400; i++) {
          const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, i % 251)) }).add(
            SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: payer.publicKey, lamports: i + 1 }),
          );
          if (i % 5 === 0) tx.partialSign(payer);
          else tx.sign(payer, other);
          const bytes = tx.serialize({ requireAllSignatures: false });
          if (i % 3 === 0) bytes[1 + ((i * 31) % (bytes.length - 1))]! ^= 1 << (i % 8);
          const wire = parseWireTransaction(bytes);
          if (!isWireDefect(wire)) wires.push(wire);
        }
        const checks = await Promise.all(wires.map((wire) => verifier.verify(wire)));
        let invalid = 0;
        checks.forEach((check, i) => {
          assert.deepEqual(check, verifyTransactionSignatures(wires[i]!), `transaction ${i}`);
          if (!check.valid) invalid++;
        });
        assert.ok(invalid > 50 && invalid < wires.length - 50, `${invalid} of ${wires.length} invalid`);
        assert.ok(
          checks.some((c) => !c.valid && c.empty),
          'an empty signature is reported as such',
        );
      } finally {
        await verifier.close();
      }
    });
  }
});
