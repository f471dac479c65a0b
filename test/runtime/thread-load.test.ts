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
    load.latest = 0.3;
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

  it('after an idle spell, stays off the request thread while the smoothed figures catch up', () => {
    // Seen at a quarter of capacity: each burst after an idle second moved verification off
    // on the first busy sample, came back 50 ms later on the smoothed figures (still near
    // the idle spell's), and went off again, a queue building at each return.
    const load = fakeLoad(0.1);
    const changes: boolean[] = [];
    const where = createOffloadSwitch(load, 0.05, (inline) => changes.push(inline));
    load.latest = 0.95;
    load.sample();
    assert.equal(where.inline, false);
    // Offloaded: the thread 45 % busy, and 165 verifications a sample (3,300 a second) that
    // would take another 16.5 % inline. The smoothed figures climb from the idle spell's.
    for (let i = 0; i < 20; i++) {
      load.latest = 0.45;
      load.busy += (0.45 - load.busy) * 0.2;
      where.ran(165);
      load.sample();
      assert.equal(where.inline, false, `sample ${i + 1}: 0.45 + 0.165 would not fit under ${INLINE_BELOW}`);
    }
    // The burst ends: back inline once both the last sample and the smoothed figures fit.
    for (let i = 0; i < 40; i++) {
      load.latest = 0.05;
      load.busy += (0.05 - load.busy) * 0.2;
      where.ran(5);
      load.sample();
    }
    assert.equal(where.inline, true);
    assert.deepEqual(changes, [false, true]);
  });
});
