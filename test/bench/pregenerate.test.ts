import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pregenerate } from '../../bench/signed-transactions';

describe("the benchmark's pre-signed transactions", () => {
  it('refills between runs for what the next will send, so that a pool sized from a cold guess is not signed on the fly', () => {
    let signed = 0;
    const pool = pregenerate(() => `tx${signed++}`, 10);
    const sent: string[] = [];
    for (let i = 0; i < 10; i++) sent.push(pool.next()); // a warm-up that used the whole first guess
    assert.equal(signed, 10);
    pool.refill(5); // the measured run is five times as long as the warm-up
    assert.equal(signed, 60, 'signed now, between runs');
    for (let i = 0; i < 50; i++) sent.push(pool.next());
    assert.equal(pool.onTheFly, 0);
    assert.equal(new Set(sent).size, 60, 'every transaction distinct');
    sent.push(pool.next());
    assert.equal(pool.onTheFly, 1, 'beyond what was made: signed on the fly, and counted');
    pool.refill(2); // 51 sent since the last refill
    assert.equal(signed, 61 + 102);
  });

  it('never signs more for a cycling pool (the ceiling takes the same ones again)', () => {
    let signed = 0;
    const pool = pregenerate(() => `tx${signed++}`, 3, true);
    for (let i = 0; i < 7; i++) pool.next();
    pool.refill(10);
    assert.equal(signed, 3);
    assert.equal(pool.onTheFly, 0);
  });
});
