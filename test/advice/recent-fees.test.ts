/**
 * The recent blocks behind the fee advice: a flood of estimates shares one refresh a slot,
 * a refresh reads the slot and at most four new blocks, newest first, the window keeps 150
 * slots, and a failing node is an error only when nothing is kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentFees } from '../../src/advice/recent-fees';

function node(slot: { value: number }) {
  const calls: string[] = [];
  const read = async (method: string, params: readonly unknown[]) => {
    calls.push(method === 'getBlock' ? `getBlock ${String(params[0])}` : method);
    if (method === 'getSlot') return { result: slot.value };
    return { result: { transactions: [] } };
  };
  return { calls, read };
}

describe('recent fees', () => {
  it('answers a flood of estimates with one refresh a slot: the slot and at most four new blocks, newest first', async () => {
    const slot = { value: 1_000 };
    let clock = 0;
    const { calls, read } = node(slot);
    const recent = new RecentFees(read, () => clock);
    await Promise.all(Array.from({ length: 100 }, () => recent.window(150)));
    assert.deepEqual(calls, ['getSlot', 'getBlock 999', 'getBlock 998', 'getBlock 997', 'getBlock 996']);
    await Promise.all(Array.from({ length: 100 }, () => recent.window(150)));
    assert.equal(calls.length, 5, 'within the same slot: no read');
    clock += 400;
    slot.value += 1;
    await recent.fresh(150);
    assert.deepEqual(calls.slice(5), ['getSlot', 'getBlock 1000', 'getBlock 995', 'getBlock 994', 'getBlock 993']);
    assert.equal((await recent.window(3)).map((s) => s.slot).join(), '1000,999,998');
  });

  it('keeps the last 150 slots, and keeps answering from them when the node fails; with nothing kept the failure is the answer', async () => {
    const slot = { value: 500 };
    let clock = 0;
    let failing = false;
    const { read } = node(slot);
    const recent = new RecentFees(
      async (method, params) => {
        if (failing) throw new Error('connect ECONNREFUSED');
        return read(method, params);
      },
      () => clock,
    );
    for (let i = 0; i < 60; i++) {
      await recent.fresh(150);
      clock += 400;
    }
    assert.equal((await recent.fresh(150)).length, 150);
    slot.value += 200;
    clock += 400;
    await recent.fresh(150);
    assert.ok(
      (await recent.window(150)).every((s) => s.slot >= slot.value - 150),
      'slots older than 150 are forgotten',
    );
    failing = true;
    clock += 400;
    assert.ok((await recent.fresh(150)).length > 0);
    clock += 400;
    assert.ok((await recent.window(150)).length > 0);
    const fresh = new RecentFees(async () => {
      throw new Error('connect ECONNREFUSED');
    });
    await assert.rejects(fresh.window(150), /ECONNREFUSED/);
  });

  it('answers at once from what is kept while the refresh of a new slot runs behind, and from the new blocks once it ended', async () => {
    const slot = { value: 2_000 };
    let clock = 0;
    let release: () => void = () => {};
    let held = false;
    const { read } = node(slot);
    const recent = new RecentFees(
      async (method, params) => {
        if (held && method === 'getBlock') await new Promise<void>((resolve) => (release = resolve));
        return read(method, params);
      },
      () => clock,
    );
    assert.equal((await recent.window(150))[0]!.slot, 1_999, 'with nothing kept, the first estimate waits for the blocks');
    held = true;
    clock += 400;
    slot.value += 1;
    const answered = await Promise.race([recent.window(150), new Promise((resolve) => setTimeout(() => resolve('waited'), 1_000))]);
    assert.notEqual(answered, 'waited', 'answered without waiting for the node');
    assert.equal((answered as { slot: number }[])[0]!.slot, 1_999, 'from what was kept');
    held = false;
    release();
    assert.equal((await recent.fresh(150))[0]!.slot, 2_000);
  });
});
