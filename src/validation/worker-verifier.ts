/**
 * Signature verification on other cores. ed25519 verification is the hot path's most
 * expensive step (about 50 µs per signature with libsodium); doing it on worker threads lets
 * the request thread parse, journal and answer meanwhile.
 *
 * Each worker serves a slot ring in shared memory (runtime/slot-ring.ts): a transaction is
 * written into the next free slot and verified as soon as the worker gets to it, so
 * verification overlaps the request thread's other work instead of taking turns with it.
 * Transactions that find every slot taken wait in a queue here and go as slots free up. If
 * a worker dies, what it held is verified here, in this thread, and it gets no more work.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { createSlotRing, SlotRingProducer } from '../runtime/slot-ring';
import type { SignatureVerifier } from './transaction-validator';
import type { SignatureCheck } from './verify-signatures';
import { verifyTransactionSignatures } from './verify-signatures';
import { EMPTY_FLAG, PACKED_MAX_BYTES, packTransaction } from './verify-worker';
import type { WireTransaction } from './wire-transaction';

/** Slots per worker: more than the requests a busy gateway has in flight at once (512 KB each). */
const SLOTS = 256;

interface Pending {
  readonly wire: WireTransaction;
  readonly resolve: (check: SignatureCheck) => void;
}

interface Lane {
  readonly worker: Worker;
  readonly ring: SlotRingProducer;
  /** The transaction in each slot, until its result comes back. */
  readonly inSlot: (Pending | undefined)[];
  alive: boolean;
}

function toCheck(result: number): SignatureCheck {
  return result < 0 ? { valid: true } : { valid: false, index: result & ~EMPTY_FLAG, empty: (result & EMPTY_FLAG) !== 0 };
}

/**
 * `spinMs`: how long an idle worker spins before it sleeps. Under load the next transaction
 * arrives within it (no wake-up, no interrupt between cores); idle, it costs that much CPU
 * after each burst.
 */
export function createWorkerVerifier(threads: number, spinMs = 0.05): SignatureVerifier {
  const script = path.join(__dirname, 'verify-worker.js');
  /** Transactions waiting for a free slot, in order. */
  const overflow: Pending[] = [];

  const lanes: Lane[] = Array.from({ length: threads }, () => {
    const memory = createSlotRing(SLOTS, PACKED_MAX_BYTES);
    const worker = new Worker(script, { workerData: { verifier: true, ring: memory, spinMs } });
    const inSlot: (Pending | undefined)[] = new Array(SLOTS);
    const ring: SlotRingProducer = new SlotRingProducer(memory, (slot, result) => {
      const pending = inSlot[slot]!;
      inSlot[slot] = undefined;
      pending.resolve(toCheck(result));
      if (ring.inFlight === 0) worker.unref();
      if (overflow.length > 0) queueMicrotask(drainOverflow);
    });
    const lane: Lane = { worker, ring, inSlot, alive: true };
    const abandon = () => {
      if (!lane.alive) return;
      lane.alive = false;
      ring.harvest(); // what it finished counts
      inSlot.forEach((pending, slot) => {
        if (pending === undefined) return;
        inSlot[slot] = undefined;
        pending.resolve(verifyTransactionSignatures(pending.wire));
      });
    };
    worker.on('error', abandon);
    worker.on('exit', abandon);
    // A worker is referenced only while it holds work (a pending Atomics.waitAsync does not
    // keep the event loop alive): an idle verifier must not keep the process alive.
    worker.unref();
    return lane;
  });

  /** The live lane with the fewest transactions in flight, or undefined when every slot is taken. */
  const pick = (): Lane | undefined => {
    let best: Lane | undefined;
    for (const lane of lanes) {
      if (lane.alive && lane.ring.inFlight < SLOTS && (best === undefined || lane.ring.inFlight < best.ring.inFlight)) best = lane;
    }
    return best;
  };

  const place = (pending: Pending): boolean => {
    const lane = pick();
    if (lane === undefined) return false;
    if (lane.ring.inFlight === 0) lane.worker.ref();
    const slot = lane.ring.push((target) => packTransaction(pending.wire, target));
    lane.inSlot[slot] = pending;
    return true;
  };

  function drainOverflow(): void {
    while (overflow.length > 0) {
      if (lanes.every((lane) => !lane.alive)) {
        for (const pending of overflow.splice(0)) pending.resolve(verifyTransactionSignatures(pending.wire));
        return;
      }
      if (!place(overflow[0]!)) return;
      overflow.shift();
    }
  }

  return {
    verify(wire) {
      return new Promise((resolve) => {
        const pending = { wire, resolve };
        if (overflow.length > 0 || !place(pending)) {
          overflow.push(pending);
          drainOverflow();
        }
      });
    },
    async close() {
      for (const lane of lanes) lane.ring.close();
      await Promise.all(lanes.map((lane) => lane.worker.terminate()));
    },
  };
}
