/**
 * Refusal reasons are kept per key: a key refused in a flood pushes out only its own oldest
 * entries, and another key's reason for the same signature is its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import { RecentRefusals } from '../../src/pipeline/recent-refusals';

/** The Base64 of a wire transaction's start (all that is read of it) whose first signature holds `n`. */
function encodedWithSignature(n: number): { encoded: string; signature: string } {
  const bytes = Buffer.alloc(1 + 64 + 1);
  bytes[0] = 1;
  bytes.writeUInt32BE(n + 1, 1);
  return { encoded: bytes.toString('base64'), signature: bs58.encode(bytes.subarray(1, 65)) };
}

describe('recent refusals', () => {
  it("a flood from one key does not push out another key's reasons", () => {
    const refusals = new RecentRefusals(60_000);
    const victim = encodedWithSignature(0);
    refusals.record(victim.encoded, 'key_victim', 'refused at validation: the transaction is not signed', 'invalid_request');
    // More than the whole table held when it was shared.
    for (let i = 1; i <= 100_001; i++) refusals.record(encodedWithSignature(i).encoded, 'key_flood', 'rate limited', 'rate_limited');
    assert.equal(refusals.get('key_victim', victim.signature)?.reason, 'refused at validation: the transaction is not signed');
    assert.equal(refusals.get('key_flood', encodedWithSignature(1).signature), undefined, "the flood's oldest went first");
    assert.equal(refusals.get('key_flood', encodedWithSignature(100_001).signature)?.reason, 'rate limited');
  });

  it("each key reads only its own: the same signature under another key is that key's entry", () => {
    const refusals = new RecentRefusals(60_000);
    const tx = encodedWithSignature(7);
    refusals.record(tx.encoded, 'key_a', 'reason a', 'invalid_request');
    refusals.record(tx.encoded, 'key_b', 'reason b', 'rate_limited');
    assert.equal(refusals.get('key_a', tx.signature)?.reason, 'reason a');
    assert.equal(refusals.get('key_b', tx.signature)?.reason, 'reason b');
    assert.equal(refusals.get('key_b', tx.signature)?.reasonCode, 'rate_limited');
    assert.equal(refusals.get('key_c', tx.signature), undefined);
  });
});
