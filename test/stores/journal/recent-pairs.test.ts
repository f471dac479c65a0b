import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { PairBuffer, UnindexedSeqs, pairKey, signaturePrefix } from '../../../src/stores/journal/recent-pairs';
import { packIndexPairs } from '../../../src/stores/journal/signature-index-sqlite';

/** A wire-like blob: a count byte, then a signature starting with `lead` (random otherwise). */
const wire = (lead?: Buffer) => {
  const bytes = Buffer.concat([Buffer.from([1]), crypto.randomBytes(64 + 40)]);
  lead?.copy(bytes, 1);
  return bytes;
};

describe('the signature index entries held before the index has them', () => {
  it('packs pairs byte for byte as packIndexPairs does, sequence numbers past 2^32 included, and puts a refused batch back in front', () => {
    const wires = Array.from({ length: 150 }, () => wire());
    const seqs = wires.map((_, i) => (i === 149 ? 2 ** 33 + 5 : i + 1));
    const pending = new PairBuffer();
    wires.slice(0, 100).forEach((w, i) => pending.push(w, seqs[i]!));
    const first = pending.take()!;
    assert.deepEqual(first, packIndexPairs(wires.slice(0, 100).map((w, i) => ({ prefix: signaturePrefix(w), seq: seqs[i]! }))));
    assert.equal(pending.take(), null, 'taken: empty');
    wires.slice(100).forEach((w, i) => pending.push(w, seqs[100 + i]!));
    pending.putBack(first);
    assert.deepEqual(pending.take(), packIndexPairs(wires.map((w, i) => ({ prefix: signaturePrefix(w), seq: seqs[i]! }))));
  });

  it('finds every sequence number under a shared key and forgets exactly the pairs the index wrote', () => {
    const lead = crypto.randomBytes(4);
    const [a, b, c] = [wire(lead), wire(lead), wire()];
    assert.equal(pairKey(a, 1), pairKey(b, 1));
    const unindexed = new UnindexedSeqs();
    const pending = new PairBuffer();
    for (const [w, seq] of [
      [a, 7],
      [b, 9],
      [c, 11],
    ] as const) {
      unindexed.add(pairKey(w, 1), seq);
      pending.push(w, seq);
    }
    assert.deepEqual(unindexed.seqsOf(pairKey(a, 1)), [7, 9]);
    const written = pending.take()!;
    // b's pair first (the second under the shared key): a's stays.
    unindexed.forget(written.subarray(2, 4));
    assert.deepEqual(unindexed.seqsOf(pairKey(a, 1)), [7]);
    // Then a's: c's is still found here.
    unindexed.forget(written.subarray(0, 2));
    assert.deepEqual(unindexed.seqsOf(pairKey(a, 1)), []);
    assert.deepEqual(unindexed.seqsOf(pairKey(c, 1)), [11]);
    unindexed.forget(written.subarray(4));
    assert.equal(unindexed.size, 0);
    // A refused batch with nothing come since is simply taken again.
    pending.push(a, 12);
    const refused = pending.take()!;
    pending.putBack(refused);
    assert.deepEqual(pending.take(), refused);
  });
});
