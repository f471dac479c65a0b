import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import { encodeBase58 } from '../../src/validation/base58';

describe('encodeBase58 (cross-checked against bs58)', () => {
  it('agrees with bs58 on random signatures, keys and lengths, leading zeros included', () => {
    for (let i = 0; i < 20_000; i++) {
      const length = i < 10_000 ? 64 : i % 80;
      const bytes = crypto.randomBytes(length);
      const zeros = i % 7 === 0 ? Math.min(length, i % 5) : 0;
      bytes.fill(0, 0, zeros);
      assert.equal(encodeBase58(bytes), bs58.encode(bytes), bytes.toString('hex'));
    }
  });

  it('handles the edge values', () => {
    for (const bytes of [
      Buffer.alloc(0),
      Buffer.alloc(1),
      Buffer.alloc(64),
      Buffer.alloc(64, 0xff),
      Buffer.from([0, 0, 1]),
      Buffer.from([57]),
      Buffer.from([58]),
    ]) {
      assert.equal(encodeBase58(bytes), bs58.encode(bytes));
    }
  });
});
