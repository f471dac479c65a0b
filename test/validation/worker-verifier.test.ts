import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorkerVerifier } from '../../src/validation/worker-verifier';
import { verifyTransactionSignatures } from '../../src/validation/verify-signatures';
import { transfers } from '../helpers/signed-wires';

describe('signature verification on worker threads (cross-checked against the inline verifier)', () => {
  // One thread: 400 transactions at once are more than its 256 slots, so some wait their turn.
  for (const threads of [1, 2]) {
    it(`agrees on valid, forged and unsigned transactions sent all at once (${threads} thread${threads > 1 ? 's' : ''})`, async () => {
      const verifier = createWorkerVerifier(threads);
      try {
        const wires = transfers(400, true);
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
