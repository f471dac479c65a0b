import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { nativeEd25519 } from '../../src/validation/native-ed25519';
import { createTurnGroupVerifier } from '../../src/validation/turn-group-verifier';
import { verifyTransactionSignaturesAsValidators } from '../../src/validation/verify-signatures';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';

/** `count` transfers, one or two signers; every third spoilt (a flipped bit), every fifth with a blank second signature. */
function transfers(count: number, spoil: boolean): WireTransaction[] {
  const payer = Keypair.generate();
  const other = Keypair.generate();
  const wires: WireTransaction[] = [];
  for (let i = 0; wires.length < count; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, i % 251)) }).add(
      SystemProgram.transfer({ fromPubkey: i % 2 === 0 ? payer.publicKey : other.publicKey, toPubkey: payer.publicKey, lamports: i + 1 }),
    );
    if (spoil && i % 5 === 0 && i % 2 === 1) tx.partialSign(payer);
    else tx.sign(...(i % 2 === 0 ? [payer] : [payer, other]));
    const bytes = tx.serialize({ requireAllSignatures: false });
    if (spoil && i % 3 === 0) bytes[1 + ((i * 31) % (bytes.length - 1))]! ^= 1 << (i % 8);
    const wire = parseWireTransaction(bytes);
    if (!isWireDefect(wire)) wires.push(wire);
  }
  return wires;
}

describe('inline verification, one group a turn (cross-checked against libsodium)', () => {
  it('gives each transaction its own verdict when a turn holds valid, forged and unsigned ones, more than one group', async () => {
    const verifier = createTurnGroupVerifier();
    const wires = transfers(75, true);
    const checks = await Promise.all(wires.map((wire) => verifier.verify(wire)));
    let invalid = 0;
    checks.forEach((check, i) => {
      // Ordinary signatures: the cofactored and cofactorless rules agree (native-ed25519.test.ts shows where they part).
      assert.deepEqual(check, verifyTransactionSignaturesAsValidators(wires[i]!), `transaction ${i}`);
      if (!check.valid) invalid++;
    });
    assert.ok(invalid > 10 && invalid < wires.length - 10, `${invalid} of ${wires.length} invalid`);
    assert.ok(checks.some((c) => !c.valid && c.empty));
  });

  it(
    'verifies the transactions of one turn with one call per 32, and those of another turn apart',
    { skip: nativeEd25519 === null && 'the native verifier was not built' },
    async () => {
      const groups: number[] = [];
      const verifier = createTurnGroupVerifier((signatures) => groups.push(signatures));
      const wires = transfers(40, false);
      const signatures = (from: number, to: number) => wires.slice(from, to).reduce((sum, wire) => sum + wire.signatures.length, 0);
      const checks = await Promise.all(wires.map((wire) => verifier.verify(wire)));
      assert.ok(checks.every((check) => check.valid));
      assert.deepEqual(groups, [signatures(0, 32), signatures(32, 40)], 'two groups: 32 and 8 transactions');
      groups.length = 0;
      assert.deepEqual(await verifier.verify(wires[0]!), { valid: true });
      assert.deepEqual(await verifier.verify(wires[1]!), { valid: true });
      assert.deepEqual(groups, [signatures(0, 1), signatures(1, 2)], 'one turn each: one alone each');
    },
  );
});
