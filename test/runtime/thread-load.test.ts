import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createOffloadSwitch, INLINE_BELOW, OFFLOAD_ABOVE, watchThreadLoad } from '../../src/runtime/thread-load';
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

  it('offloads above the high mark and comes back only when the work itself would fit under the low mark', () => {
    const load = fakeLoad(0.5);
    const changes: boolean[] = [];
    const where = createOffloadSwitch(load, 0.05, (inline) => changes.push(inline));
    // 500 units of 0.05 ms per 50 ms sample: 50 % of the thread.
    for (let i = 0; i < 20; i++) {
      where.ran(500, 25);
      load.sample();
    }
    assert.equal(where.inline, true, `busy 0.5 ≤ ${OFFLOAD_ABOVE}: inline`);
    load.busy = 0.8;
    load.sample();
    assert.equal(where.inline, false);
    // Offloaded, the same work would still be 50 % of the thread inline.
    load.busy = 0.3;
    for (let i = 0; i < 20; i++) {
      where.ran(500);
      load.sample();
    }
    assert.equal(where.inline, false, `0.3 + 0.5 ≥ ${INLINE_BELOW}: stays offloaded`);
    for (let i = 0; i < 20; i++) {
      where.ran(50);
      load.sample();
    }
    assert.equal(where.inline, true, '0.3 + 0.05 < 0.55: back inline');
    assert.deepEqual(changes, [false, true]);
  });

  it('offloads on the first sample over the high mark, before the smoothed figure gets there', () => {
    // After an idle spell the smoothed figure is near 0: waiting for it to climb past the
    // mark (about 300 ms) let a queue build at a rate the thread could not carry inline.
    const load = fakeLoad(0.1);
    const where = createOffloadSwitch(load, 0.05);
    load.latest = 0.95;
    load.sample();
    assert.equal(where.inline, false, 'one busy sample moves the work off the request thread');
    // Coming back is still by the smoothed figure: one quiet sample does not bring it back.
    load.latest = 0.2;
    load.busy = 0.6;
    where.ran(500);
    load.sample();
    assert.equal(where.inline, false);
  });
});
