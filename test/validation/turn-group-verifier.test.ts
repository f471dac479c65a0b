import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nativeEd25519 } from '../../src/validation/native-ed25519';
import { createTurnGroupVerifier } from '../../src/validation/turn-group-verifier';
import { verifyTransactionSignaturesAsValidators } from '../../src/validation/verify-signatures';
import { transfers } from '../helpers/signed-wires';

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
