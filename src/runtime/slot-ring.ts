/**
 * A single-producer, single-consumer ring of fixed-size slots in shared memory, for handing
 * work from the request thread to a worker thread and getting a number back for each item.
 *
 * Why not `postMessage`: on this kind of machine (a small virtual machine) a message costs a
 * round trip of 35-50 µs (serialisation, a wake-up of each thread, an interrupt between
 * cores), and one outstanding batch per worker made the stages take turns: all 32
 * connections' transactions in the worker while the request thread waited, then the
 * reverse. Here every item goes to the worker the moment it is written, the worker spins
 * for a moment before it sleeps (work arriving meanwhile costs no wake-up), and the
 * request thread is woken through `Atomics.waitAsync` at most once per turn of its event
 * loop, however many items finished meanwhile (measured round trip: 6 µs with the worker
 * spinning, 23 µs asleep).
 *
 * Counters are 32-bit and wrap; every comparison is of differences, so wrapping is harmless.
 */
import { performance } from 'node:perf_hooks';

/** Indices into the control array. */
const HEAD = 0; // items written by the producer
const DONE = 1; // items finished by the consumer
const SLEEPING = 2; // 1 while the consumer waits in Atomics.wait
const CLOSED = 3; // 1 once the producer closes the ring

/** The shared memory of one ring; plain data, so it can be passed to a worker in `workerData`. */
export interface SlotRingMemory {
  readonly slotCount: number;
  readonly slotBytes: number;
  readonly control: SharedArrayBuffer;
  readonly slots: SharedArrayBuffer;
  /** Per slot: the item's length (written by the producer), then its result (by the consumer). */
  readonly words: SharedArrayBuffer;
}

/** `slotCount` must be a power of two. */
export function createSlotRing(slotCount: number, slotBytes: number): SlotRingMemory {
  if (slotCount <= 0 || (slotCount & (slotCount - 1)) !== 0) throw new Error(`slotCount must be a power of two, got ${slotCount}`);
  return {
    slotCount,
    slotBytes,
    control: new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT),
    slots: new SharedArrayBuffer(slotCount * slotBytes),
    words: new SharedArrayBuffer(2 * slotCount * Int32Array.BYTES_PER_ELEMENT),
  };
}

/** The request thread's end: writes items, and calls `onDone(slot, result)` for each finished one, in order. */
export class SlotRingProducer {
  private readonly control: Int32Array;
  private readonly slots: Buffer;
  private readonly lengths: Int32Array;
  private readonly results: Int32Array;
  private readonly mask: number;
  private head = 0;
  private harvested = 0;
  private waiting = false;

  constructor(
    private readonly memory: SlotRingMemory,
    private readonly onDone: (slot: number, result: number) => void,
  ) {
    this.control = new Int32Array(memory.control);
    this.slots = Buffer.from(memory.slots);
    this.lengths = new Int32Array(memory.words, 0, memory.slotCount);
    this.results = new Int32Array(memory.words, memory.slotCount * Int32Array.BYTES_PER_ELEMENT, memory.slotCount);
    this.mask = memory.slotCount - 1;
  }

  /** Items written and not yet reported done. */
  get inFlight(): number {
    return (this.head - this.harvested) | 0;
  }

  /**
   * Writes one item: `write` fills the slot it is given and returns the length used. Returns
   * the slot's index (passed to `onDone` later), or -1 without calling `write` when all
   * slots are in flight.
   */
  push(write: (slot: Buffer) => number): number {
    if (this.inFlight >= this.memory.slotCount) return -1;
    const index = this.head & this.mask;
    const at = index * this.memory.slotBytes;
    this.lengths[index] = write(this.slots.subarray(at, at + this.memory.slotBytes));
    this.head = (this.head + 1) | 0;
    Atomics.store(this.control, HEAD, this.head);
    // Seen asleep after the store: it may have missed the new head, so wake it (see serveSlotRing).
    if (Atomics.load(this.control, SLEEPING) === 1) Atomics.notify(this.control, HEAD, 1);
    this.watch();
    return index;
  }

  /** Reports every item finished so far. */
  harvest(): void {
    const done = Atomics.load(this.control, DONE);
    while (this.harvested !== done) {
      const index = this.harvested & this.mask;
      this.harvested = (this.harvested + 1) | 0;
      this.onDone(index, this.results[index]!);
    }
  }

  /** Tells the consumer to stop once it has nothing left to do. */
  close(): void {
    Atomics.store(this.control, CLOSED, 1);
    Atomics.notify(this.control, HEAD, 1);
  }

  /** While items are in flight, one waiter on DONE: the consumer's notify wakes this thread once, then it harvests. */
  private watch(): void {
    if (this.waiting || this.inFlight === 0) return;
    const wait = Atomics.waitAsync(this.control, DONE, this.harvested);
    if (!wait.async) {
      // Already moved on: harvest at the end of this task, not inside the caller's push.
      this.waiting = true;
      queueMicrotask(() => this.woken());
      return;
    }
    this.waiting = true;
    void wait.value.then(() => this.woken());
  }

  private woken(): void {
    this.waiting = false;
    this.harvest();
    this.watch();
  }
}

/**
 * Handles several waiting items at once, where that is cheaper than one at a time: `handle`
 * gets the slots' memory and each item's offset and length, and returns true when every
 * item's result is `result`; false sends each item to the one-at-a-time handler.
 */
export interface GroupHandler {
  readonly max: number;
  readonly result: number;
  handle(slots: Uint8Array, offsets: Int32Array, lengths: Int32Array, count: number): boolean;
}

/**
 * The worker's end, which never returns until the ring is closed: handles each item as soon
 * as it is written (`handle` gets the slot's bytes and returns the item's result), or the
 * items waiting together at once (`group`), spinning for `spinMs` when there is nothing to
 * do before sleeping in `Atomics.wait`.
 */
export function serveSlotRing(memory: SlotRingMemory, handle: (item: Buffer) => number, spinMs: number, group?: GroupHandler): void {
  const control = new Int32Array(memory.control);
  const slots = Buffer.from(memory.slots);
  const lengths = new Int32Array(memory.words, 0, memory.slotCount);
  const results = new Int32Array(memory.words, memory.slotCount * Int32Array.BYTES_PER_ELEMENT, memory.slotCount);
  const mask = memory.slotCount - 1;
  const offsets = new Int32Array(group?.max ?? 0);
  const groupLengths = new Int32Array(group?.max ?? 0);
  let done = Atomics.load(control, DONE);
  for (;;) {
    let head = Atomics.load(control, HEAD);
    if (head === done) head = spin(control, done, spinMs);
    if (head === done) {
      if (Atomics.load(control, CLOSED) === 1) return;
      Atomics.store(control, SLEEPING, 1);
      // Re-read after announcing sleep: a producer that wrote before seeing SLEEPING is caught here.
      if (Atomics.load(control, HEAD) === done) Atomics.wait(control, HEAD, done);
      Atomics.store(control, SLEEPING, 0);
      continue;
    }
    const waiting = (head - done) | 0;
    if (group !== undefined && waiting > 1) {
      const count = Math.min(waiting, group.max);
      for (let i = 0; i < count; i++) {
        const index = (done + i) & mask;
        offsets[i] = index * memory.slotBytes;
        groupLengths[i] = lengths[index]!;
      }
      if (group.handle(slots, offsets, groupLengths, count)) {
        for (let i = 0; i < count; i++) results[(done + i) & mask] = group.result;
        done = (done + count) | 0;
        Atomics.store(control, DONE, done);
        Atomics.notify(control, DONE);
        continue;
      }
    }
    while (done !== head) {
      const index = done & mask;
      const at = index * memory.slotBytes;
      results[index] = handle(slots.subarray(at, at + lengths[index]!));
      done = (done + 1) | 0;
      Atomics.store(control, DONE, done);
      // Wakes the producer only if it is waiting; otherwise it is a check of a list, no system call.
      Atomics.notify(control, DONE);
    }
  }
}

/** Waits up to `spinMs` for the head to move past `done`, without sleeping; returns the head. */
function spin(control: Int32Array, done: number, spinMs: number): number {
  if (spinMs <= 0) return done;
  const until = performance.now() + spinMs;
  for (let i = 1; ; i++) {
    const head = Atomics.load(control, HEAD);
    if (head !== done) return head;
    // Reading the clock costs more than a load: look at it every 64 turns.
    if ((i & 63) === 0 && performance.now() > until) return head;
  }
}
