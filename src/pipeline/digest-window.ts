/**
 * A time window of 16-byte digests held in flat typed arrays, for duplicate detection.
 *
 * A `Map` of a million strings is a million objects for the garbage collector to trace on
 * every major collection, and those pauses show up in the request latency tail. Here the
 * digests live in one ring buffer and an open-addressing hash table of ring positions
 * (linear probing, backward-shift deletion): a few large arrays, nothing per entry.
 * 24 bytes an entry plus the table (8 bytes per slot, two slots an entry).
 *
 * Entries are inserted in time order and all live `ttlMs`, so the oldest is always at the
 * ring's head: expiry and the size bound both evict from there.
 */
const DIGEST_BYTES = 16;

export class DigestWindow {
  private readonly digests: Buffer;
  private readonly expiries: Float64Array;
  /** Ring position + 1 of the entry in each slot; 0 = empty. */
  private readonly table: Uint32Array;
  private readonly mask: number;
  private head = 0;
  private count = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly capacity: number,
    private readonly now: () => number = Date.now,
  ) {
    this.digests = Buffer.alloc(capacity * DIGEST_BYTES);
    this.expiries = new Float64Array(capacity);
    let slots = 2;
    while (slots < capacity * 2) slots *= 2;
    this.table = new Uint32Array(slots);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  has(digest: Buffer): boolean {
    const position = this.find(digest);
    return position >= 0 && this.expiries[position]! > this.now();
  }

  add(digest: Buffer): void {
    const now = this.now();
    while (this.count > 0 && this.expiries[this.head]! <= now) this.evictOldest();
    const existing = this.find(digest);
    if (existing >= 0) {
      // Already here: it stays where it is (its window started when it was first accepted).
      return;
    }
    if (this.count === this.capacity) this.evictOldest();
    const position = (this.head + this.count) % this.capacity;
    digest.copy(this.digests, position * DIGEST_BYTES, 0, DIGEST_BYTES);
    this.expiries[position] = now + this.ttlMs;
    let slot = this.slotOf(digest);
    while (this.table[slot] !== 0) slot = (slot + 1) & this.mask;
    this.table[slot] = position + 1;
    this.count += 1;
  }

  /** The ring position holding `digest`, or -1. */
  private find(digest: Buffer): number {
    for (let slot = this.slotOf(digest); ; slot = (slot + 1) & this.mask) {
      const entry = this.table[slot]!;
      if (entry === 0) return -1;
      if (this.digests.compare(digest, 0, DIGEST_BYTES, (entry - 1) * DIGEST_BYTES, entry * DIGEST_BYTES) === 0) return entry - 1;
    }
  }

  /** Digests are uniformly random already: their first four bytes make the hash. */
  private slotOf(digest: Buffer): number {
    return digest.readUInt32LE(0) & this.mask;
  }

  private evictOldest(): void {
    const position = this.head;
    const digest = this.digests.subarray(position * DIGEST_BYTES, (position + 1) * DIGEST_BYTES);
    let slot = this.slotOf(digest);
    while (this.table[slot] !== position + 1) slot = (slot + 1) & this.mask;
    // Backward-shift deletion: pull later entries of the probe run into the hole.
    let hole = slot;
    for (let next = (hole + 1) & this.mask; this.table[next] !== 0; next = (next + 1) & this.mask) {
      const entry = this.table[next]!;
      const home = this.digests.readUInt32LE((entry - 1) * DIGEST_BYTES) & this.mask;
      // Move it if its home is not in (hole, next] cyclically.
      const between = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (!between) {
        this.table[hole] = entry;
        hole = next;
      }
    }
    this.table[hole] = 0;
    this.head = (this.head + 1) % this.capacity;
    this.count -= 1;
  }
}
