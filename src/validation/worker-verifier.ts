/**
 * Signature verification on other cores. ed25519 verification is the hot path's most
 * expensive step (about 50 µs per signature with libsodium); doing it on worker threads lets
 * the request thread parse, journal and answer meanwhile.
 *
 * Each worker has at most one batch at a time: what is asked for meanwhile waits and goes as
 * the next batch the moment the worker answers, packed into one transferred buffer. Waking
 * a thread is the costly part of a message (a system call, and on a virtual machine an
 * interrupt between cores), so the busier the workers, the bigger and fewer the batches.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SignatureVerifier } from './transaction-validator';
import type { SignatureCheck } from './verify-signatures';
import { EMPTY_FLAG } from './verify-worker';
import type { WireTransaction } from './wire-transaction';

interface Pending {
  readonly wire: WireTransaction;
  readonly resolve: (check: SignatureCheck) => void;
}

interface Lane {
  readonly worker: Worker;
  outstanding: number;
  readonly batches: Map<number, Pending[]>;
}

export function createWorkerVerifier(threads: number): SignatureVerifier {
  const script = path.join(__dirname, 'verify-worker.js');
  const lanes: Lane[] = Array.from({ length: threads }, () => {
    const lane: Lane = { worker: new Worker(script), outstanding: 0, batches: new Map() };
    lane.worker.on('message', ({ id, results }: { id: number; results: Int16Array }) => {
      const batch = lane.batches.get(id)!;
      lane.batches.delete(id);
      lane.outstanding -= batch.length;
      if (lane.outstanding === 0) lane.worker.unref(); // an idle verifier keeps no process alive
      if (queue.length > 0 && !scheduled) dispatch();
      batch.forEach((pending, i) => {
        const result = results[i]!;
        pending.resolve(result < 0 ? { valid: true } : { valid: false, index: result & ~EMPTY_FLAG, empty: (result & EMPTY_FLAG) !== 0 });
      });
    });
    lane.worker.unref();
    return lane;
  });
  let queue: Pending[] = [];
  let nextId = 1;
  let scheduled = false;

  const dispatch = () => {
    scheduled = false;
    const lane = lanes.find((l) => l.outstanding === 0);
    if (lane === undefined || queue.length === 0) return; // sent when a worker answers
    const batch = queue;
    queue = [];
    let size = 0;
    for (const { wire } of batch) size += 1 + wire.signatures.length * 96 + 2 + wire.message.length;
    // Unpooled: the buffer owns its ArrayBuffer whole, so it can be transferred, not copied.
    const packed = Buffer.allocUnsafeSlow(size);
    let at = 0;
    for (const { wire } of batch) {
      const n = wire.signatures.length;
      packed[at++] = n;
      for (const signature of wire.signatures) at += signature.copy(packed, at);
      for (let i = 0; i < n; i++) at += wire.staticAccountKeys[i]!.copy(packed, at);
      packed.writeUInt16LE(wire.message.length, at);
      at += 2;
      at += wire.message.copy(packed, at);
    }
    const id = nextId++;
    lane.batches.set(id, batch);
    lane.outstanding += batch.length;
    lane.worker.ref();
    lane.worker.postMessage({ id, buffer: packed.buffer, count: batch.length }, [packed.buffer as ArrayBuffer]);
  };

  return {
    verify(wire) {
      return new Promise((resolve) => {
        queue.push({ wire, resolve });
        if (!scheduled) {
          scheduled = true;
          setImmediate(dispatch);
        }
      });
    },
    async close() {
      await Promise.all(lanes.map((lane) => lane.worker.terminate()));
    },
  };
}
