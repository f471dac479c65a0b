import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { DigestWindow } from '../../src/pipeline/digest-window';

describe('DigestWindow (cross-checked against a Map)', () => {
  it('agrees with a Map-based window over random adds, lookups, expiry and eviction', () => {
    let clock = 0;
    const ttl = 1_000;
    const capacity = 500;
    const window = new DigestWindow(ttl, capacity, () => clock);
    const reference = new Map<string, number>(); // digest → expiry, in insertion order
    const pool: Buffer[] = [];
    for (let step = 0; step < 60_000; step++) {
      clock += step % 7 === 0 ? 13 : 1;
      // Forget what the reference window forgets: expired, then the oldest beyond capacity.
      for (const [key, expiry] of reference) {
        if (expiry > clock) break;
        reference.delete(key);
      }
      const reuse = pool.length > 0 && step % 3 === 0;
      const digest = reuse ? pool[step % pool.length]! : crypto.randomBytes(16);
      if (!reuse) pool.push(digest);
      if (pool.length > 3000) pool.shift();
      const key = digest.toString('hex');
      const expected = (reference.get(key) ?? 0) > clock;
      assert.equal(window.has(digest), expected, `step ${step}: has`);
      if (step % 2 === 0) {
        window.add(digest);
        if (!reference.has(key)) {
          if (reference.size === capacity) reference.delete(reference.keys().next().value!);
          reference.set(key, clock + ttl);
        }
        assert.equal(window.has(digest), true);
        // Expired entries leave the window when something is added: compare sizes then.
        assert.equal(window.size, reference.size, `step ${step}: size`);
      }
    }
  });

  it('holds a million digests in flat arrays', () => {
    const window = new DigestWindow(60_000, 1_000_000);
    const digests = Array.from({ length: 1000 }, () => crypto.randomBytes(16));
    for (let i = 0; i < 1_000_000; i++) {
      const d = crypto.randomBytes(16);
      window.add(i < 1000 ? digests[i]! : d);
    }
    assert.equal(window.size, 1_000_000);
    assert.ok(digests.every((d) => window.has(d)));
    window.add(crypto.randomBytes(16));
    assert.equal(window.has(digests[0]!), false, 'the oldest is evicted past the bound');
    assert.equal(window.has(digests[1]!), true);
  });
});
