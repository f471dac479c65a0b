import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { encodeShieldPolicy, parseShieldPolicy, SHIELD_PROGRAM_ID } from '../../src/protection/shield-policy';

const [a, b, c] = [Keypair.generate(), Keypair.generate(), Keypair.generate()].map((k) => k.publicKey.toBase58()) as [
  string,
  string,
  string,
];

/** The first layout (kind 0): kind, strategy, nonce, u32 count, then the identities. */
function policyV1(strategy: number, identities: readonly string[]): Buffer {
  const v2 = encodeShieldPolicy('deny', identities);
  return Buffer.concat([Buffer.from([0, strategy, 255]), v2.subarray(35, 39), v2.subarray(39)]);
}

describe('Yellowstone Shield policies', () => {
  it('reads both account layouts, Deny and Allow', () => {
    const deny = parseShieldPolicy(encodeShieldPolicy('deny', [a, b]), SHIELD_PROGRAM_ID);
    assert.deepEqual([deny.allows(a), deny.allows(b), deny.allows(c)], [false, false, true]);
    const allow = parseShieldPolicy(encodeShieldPolicy('allow', [a]), SHIELD_PROGRAM_ID);
    assert.deepEqual([allow.allows(a), allow.allows(b)], [true, false]);
    const v1 = parseShieldPolicy(policyV1(1, [b, c]), SHIELD_PROGRAM_ID);
    assert.deepEqual([v1.allows(a), v1.allows(b), v1.allows(c)], [false, true, true]);
    // An empty deny list trusts everyone; an empty allow list no one.
    assert.equal(parseShieldPolicy(encodeShieldPolicy('deny', []), SHIELD_PROGRAM_ID).allows(a), true);
    assert.equal(parseShieldPolicy(encodeShieldPolicy('allow', []), SHIELD_PROGRAM_ID).allows(a), false);
  });

  it('refuses what is not a policy, saying what is wrong', () => {
    assert.throws(
      () => parseShieldPolicy(encodeShieldPolicy('deny', [a]), a),
      /owned by \w+, not by the Shield program b1ockYL7X6sGtJzueDbxRVBEEPN4YeqoLW276R3MX8W/,
    );
    assert.throws(() => parseShieldPolicy(Buffer.from([7, 0, 0]), SHIELD_PROGRAM_ID), /not a Shield policy \(kind 7, 3 bytes\)/);
    assert.throws(() => parseShieldPolicy(Buffer.alloc(0), SHIELD_PROGRAM_ID), /not a Shield policy \(kind missing, 0 bytes\)/);
    assert.throws(() => parseShieldPolicy(policyV1(2, [a]), SHIELD_PROGRAM_ID), /strategy 2 is neither Deny \(0\) nor Allow \(1\)/);
    const truncated = encodeShieldPolicy('deny', [a, b]).subarray(0, 39 + 40);
    assert.throws(() => parseShieldPolicy(truncated, SHIELD_PROGRAM_ID), /lists 2 identities but holds 1/);
  });
});
