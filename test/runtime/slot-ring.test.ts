import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { createSlotRing, SlotRingProducer, type SlotRingMemory } from '../../src/runtime/slot-ring';

/** A worker that serves the ring, answering each item with the sum of its bytes times its length. */
function startSummer(memory: SlotRingMemory, spinMs: number): Worker {
  const ring = path.join(__dirname, '../../src/runtime/slot-ring.js');
  const code = `
    const { workerData } = require('node:worker_threads');
    const { serveSlotRing } = require(${JSON.stringify(ring)});
    serveSlotRing(workerData.memory, (item) => { let sum = 0; for (const b of item) sum += b; return sum * item.length; }, workerData.spinMs);
  `;
  return new Worker(code, { eval: true, workerData: { memory, spinMs } });
}

const expected = (item: Buffer) => item.reduce((sum, b) => sum + b, 0) * item.length;

describe('slot ring (shared memory between the request thread and a worker)', () => {
  for (const spinMs of [0, 0.05]) {
    it(`carries 20,000 items through 8 slots in order, wrapping many times (spin ${spinMs * 1000} µs)`, { timeout: 30_000 }, async () => {
      const memory = createSlotRing(8, 64);
      const items = Array.from({ length: 20_000 }, (_, i) => crypto.randomBytes(1 + (i % 64)));
      const results: number[] = [];
      const slots: number[] = [];
      let sent = 0;
      const worker = startSummer(memory, spinMs);
      try {
        await new Promise<void>((resolve) => {
          const producer: SlotRingProducer = new SlotRingProducer(memory, (slot, result) => {
            assert.equal(slot, slots[results.length], 'results come back in the order written, from the same slot');
            results.push(result);
            if (results.length === items.length) resolve();
            else queueMicrotask(fill);
          });
          const fill = () => {
            while (sent < items.length) {
              const item = items[sent]!;
              const slot = producer.push((target) => item.copy(target));
              if (slot < 0) return; // all 8 in flight: more when some come back
              assert.ok(producer.inFlight <= 8);
              slots.push(slot);
              sent++;
            }
          };
          fill();
        });
        assert.deepEqual(results, items.map(expected));
      } finally {
        await worker.terminate();
      }
    });
  }

  it('a closed ring lets its worker finish', { timeout: 10_000 }, async () => {
    const memory = createSlotRing(4, 16);
    const worker = startSummer(memory, 0);
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    const producer = new SlotRingProducer(memory, () => {});
    await new Promise((resolve) => setTimeout(resolve, 50)); // asleep in Atomics.wait by now
    producer.close();
    assert.equal(await exited, 0);
  });

  it('refuses a slot count that is not a power of two', () => {
    assert.throws(() => createSlotRing(6, 16), /power of two/);
  });
});
