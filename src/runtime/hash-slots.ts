/**
 * A multimap from 32-bit hashes to values, for what comes and goes at the request rate
 * (the submissions in flight, the signatures the index has not written yet): open
 * addressing in two flat arrays (linear probing, backward-shift deletion), which are
 * replaced only when they double or halve.
 *
 * Why not a Map: a Map's table is replaced every few dozen insertions when its entries come
 * and go, and on Node.js 20 the tables replaced this way took the requests they referred to
 * into the old generation, where only a full collection frees them: at 7,600 requests/s the
 * pipeline's Map of submissions in flight alone was half of all that was promoted (5.4 MB/s,
 * 2.6 without it), and those full collections are the longest stalls of the latency tail
 * (docs/PERFORMANCE.md). The hash is the caller's (the first bytes of a signature are
 * random already); two values may share one, and the caller tells them apart.
 */
const EMPTY_SLOTS = 64;

export class HashSlots<V> {
  private hashes = new Uint32Array(EMPTY_SLOTS);
  /** undefined marks an empty slot. */
  private values: (V | undefined)[] = new Array<V | undefined>(EMPTY_SLOTS).fill(undefined);
  private mask = EMPTY_SLOTS - 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(hash: number, value: V): void {
    if ((this.count + 1) * 2 > this.values.length) this.resize(this.values.length * 2);
    this.place(hash >>> 0, value);
    this.count += 1;
  }

  /** The first value added under `hash` (of those still here) for which `matches` holds. */
  find(hash: number, matches: (value: V) => boolean): V | undefined {
    const key = hash >>> 0;
    for (let slot = key & this.mask; this.values[slot] !== undefined; slot = (slot + 1) & this.mask) {
      const value = this.values[slot]!;
      if (this.hashes[slot] === key && matches(value)) return value;
    }
    return undefined;
  }

  /** Every value under `hash`, in the order added. */
  all(hash: number): V[] {
    const key = hash >>> 0;
    const found: V[] = [];
    for (let slot = key & this.mask; this.values[slot] !== undefined; slot = (slot + 1) & this.mask)
      if (this.hashes[slot] === key) found.push(this.values[slot]!);
    return found;
  }

  /** Removes the first `value` (the same, by ===) under `hash`; false when it is not here. */
  remove(hash: number, value: V): boolean {
    const key = hash >>> 0;
    let slot = key & this.mask;
    for (; this.values[slot] !== undefined; slot = (slot + 1) & this.mask)
      if (this.hashes[slot] === key && this.values[slot] === value) break;
    if (this.values[slot] === undefined) return false;
    // Backward-shift deletion: pull the later entries of the probe run into the hole, keeping their order.
    let hole = slot;
    for (let next = (hole + 1) & this.mask; this.values[next] !== undefined; next = (next + 1) & this.mask) {
      const home = this.hashes[next]! & this.mask;
      // It may move back unless its home lies in (hole, next], cyclically.
      const between = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (!between) {
        this.hashes[hole] = this.hashes[next]!;
        this.values[hole] = this.values[next];
        hole = next;
      }
    }
    this.values[hole] = undefined;
    this.count -= 1;
    // Back to a small table once a burst has passed (never below the first size).
    if (this.values.length > EMPTY_SLOTS && this.count * 8 < this.values.length) this.resize(this.values.length / 2);
    return true;
  }

  private place(hash: number, value: V): void {
    let slot = hash & this.mask;
    while (this.values[slot] !== undefined) slot = (slot + 1) & this.mask;
    this.hashes[slot] = hash;
    this.values[slot] = value;
  }

  /** Re-inserts everything into `slots` slots, slot by slot from a run's start, so that values under one hash keep their order. */
  private resize(slots: number): void {
    const { hashes, values } = this;
    this.hashes = new Uint32Array(slots);
    this.values = new Array<V | undefined>(slots).fill(undefined);
    this.mask = slots - 1;
    // Start after an empty slot: every probe run is then walked from its start, in order.
    let start = 0;
    while (values[start] !== undefined) start += 1;
    for (let i = 1; i <= values.length; i++) {
      const slot = (start + i) % values.length;
      if (values[slot] !== undefined) this.place(hashes[slot]!, values[slot]);
    }
  }
}
