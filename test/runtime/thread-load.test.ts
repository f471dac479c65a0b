import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUSY_HIGH, BUSY_LOW, createOffloadShare, watchThreadLoad } from '../../src/runtime/thread-load';
import { fakeLoad } from '../helpers/fake-load';

describe('thread load and the offload switch', () => {
  it('smooths the event loop utilisation it samples', async () => {
    const load = watchThreadLoad(() => 1);
    try {
      assert.equal(load.busy, 0);
      // Samples come every 50 ms (later on a loaded machine): wait for enough of them.
      const deadline = Date.now() + 5_000;
      while (load.busy <= 0.6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(load.busy > 0.6 && load.busy <= 1, `busy ${load.busy} after samples of 1`);
    } finally {
      load.close();
    }
  });

  it('runs everything inline below the busy band, less above it, and spreads what it offloads', () => {
    const load = fakeLoad(0.5);
    const shares: number[] = [];
    const where = createOffloadShare(load, (share) => shares.push(share));
    const inlineOf = (pieces: number) => Array.from({ length: pieces }, () => where.inlineNow()).filter(Boolean).length;
    load.sample();
    assert.equal(where.share, 1, `busy 0.5 < ${BUSY_LOW}: all inline`);
    assert.equal(inlineOf(10), 10);
    load.busy = 0.95;
    load.sample(3);
    assert.equal(where.share, 0.7, `busy 0.95 > ${BUSY_HIGH}: three steps down`);
    assert.equal(inlineOf(100), 70);
    const pattern = Array.from({ length: 10 }, () => where.inlineNow());
    assert.ok(!pattern.slice(0, 4).every(Boolean), 'offloaded pieces are spread, not bunched at the end');
    load.busy = 0.85;
    load.sample(5);
    assert.equal(where.share, 0.7, 'inside the band: unchanged');
    load.busy = 1;
    load.sample(20);
    assert.equal(where.share, 0, 'never below nothing inline');
    assert.equal(shares.length, 29);
  });

});
