/**
 * A leader's bounded buffer of transactions waiting to be scheduled, ordered as Agave's
 * container orders them (transaction_state_container.rs, transaction_priority_id.rs): by
 * priority, then by id, the later arrival counting higher. The scheduler takes the highest;
 * when the buffer is over its capacity, the lowest are dropped (`pop_first`), which may be
 * the one just pushed. Kept as an array sorted lowest first: a leader's buffer here holds
 * hundreds to thousands, where a binary insertion costs less than a heap's bookkeeping.
 */

export interface Prioritized {
  readonly priority: bigint;
  /** Arrival order: unique and increasing. */
  readonly seq: number;
}

const below = (a: Prioritized, b: Prioritized) => a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq);

export class PriorityBuffer<T extends Prioritized> {
  private readonly sorted: T[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`a buffer's capacity must be a positive integer, not ${capacity}`);
  }

  get size(): number {
    return this.sorted.length;
  }

  /** Adds `entry`; returns what was dropped to stay within capacity (the lowest, possibly `entry` itself). */
  push(entry: T): T[] {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (below(this.sorted[mid]!, entry)) low = mid + 1;
      else high = mid;
    }
    this.sorted.splice(low, 0, entry);
    const over = this.sorted.length - this.capacity;
    return over > 0 ? this.sorted.splice(0, over) : [];
  }

  /** The highest, taken out. */
  popHighest(): T | undefined {
    return this.sorted.pop();
  }

  /** Takes out every entry `drop` says to, lowest first; returns them. */
  removeWhere(drop: (entry: T) => boolean): T[] {
    const removed: T[] = [];
    let kept = 0;
    for (const entry of this.sorted) {
      if (drop(entry)) removed.push(entry);
      else this.sorted[kept++] = entry;
    }
    this.sorted.length = kept;
    return removed;
  }

  /** Empties the buffer; returns what it held, lowest first. */
  clear(): T[] {
    return this.sorted.splice(0);
  }
}
