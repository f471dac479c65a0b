/**
 * The signature index's entries before its thread has written them (journal-sqlite-signatures.ts),
 * held without an object per entry: the (prefix, seq) pairs in one growing buffer laid out
 * as the index takes them (signature-index-sqlite.ts: two 64-bit integers each), and the
 * look-up as a map between small integers.
 */
import { HashSlots } from '../../runtime/hash-slots';
import type { IndexPairs } from './signature-index-sqlite';

const PAIR_BYTES = 16;
const TWO_32 = 2 ** 32;

/** The first 8 bytes of a transaction's first signature (after its count byte), as the index's integer key. */
export function signaturePrefix(wire: Buffer): bigint {
  return wire.readBigInt64LE(1);
}

/** The first 30 bits of a signature starting at `at`: a small integer (no heap number), shared by about one signature in a billion. */
export function pairKey(bytes: Buffer, at: number): number {
  return bytes.readUInt32LE(at) & 0x3fff_ffff;
}

/** Pairs for the index's next batch, in sequence order. */
export class PairBuffer {
  private bytes = Buffer.alloc(64 * PAIR_BYTES);
  private count = 0;

  /** Appends the pair of the transaction `wire` (its first signature's prefix) and `seq`. */
  push(wire: Buffer, seq: number): void {
    if ((this.count + 1) * PAIR_BYTES > this.bytes.length) {
      const grown = Buffer.alloc(this.bytes.length * 2);
      this.bytes.copy(grown);
      this.bytes = grown;
    }
    const at = this.count * PAIR_BYTES;
    wire.copy(this.bytes, at, 1, 9);
    this.bytes.writeUInt32LE(seq % TWO_32, at + 8);
    this.bytes.writeUInt32LE(Math.floor(seq / TWO_32), at + 12);
    this.count += 1;
  }

  /** Everything pushed so far, as the index takes it, and empties the buffer; null when there is nothing. */
  take(): IndexPairs | null {
    if (this.count === 0) return null;
    const pairs = new BigInt64Array(this.count * 2);
    Buffer.from(pairs.buffer).set(this.bytes.subarray(0, this.count * PAIR_BYTES));
    this.count = 0;
    return pairs;
  }

  /** A batch the index refused goes back in front of what came since (one batch is written at a time: sequence order is kept). */
  putBack(pairs: IndexPairs): void {
    const since = this.take();
    const front = Buffer.from(pairs.buffer, pairs.byteOffset, pairs.byteLength);
    const rest = since === null ? Buffer.alloc(0) : Buffer.from(since.buffer);
    // Exactly what is held (push grows it when more comes): a long outage of the index must not hold twice its backlog.
    this.bytes = Buffer.alloc(Math.max(64 * PAIR_BYTES, front.length + rest.length));
    front.copy(this.bytes, 0);
    rest.copy(this.bytes, front.length);
    this.count = (front.length + rest.length) / PAIR_BYTES;
  }
}

/**
 * Sequence numbers by pair key, for entries the index does not have yet: in flat arrays
 * (runtime/hash-slots.ts), as a Map of entries coming and going at the request rate
 * replaced its table every few dozen and had those tables promoted.
 */
export class UnindexedSeqs {
  private readonly seqs = new HashSlots<number>();

  add(key: number, seq: number): void {
    this.seqs.add(key, seq);
  }

  /** In the order noted (a key is shared rarely: the same signature twice, or 30 bits alike). */
  seqsOf(key: number): number[] {
    return this.seqs.all(key);
  }

  /** The index has written these pairs: they are found there now. */
  forget(pairs: IndexPairs): void {
    const bytes = Buffer.from(pairs.buffer, pairs.byteOffset, pairs.byteLength);
    for (let at = 0; at < bytes.length; at += PAIR_BYTES)
      this.seqs.remove(pairKey(bytes, at), bytes.readUInt32LE(at + 8) + bytes.readUInt32LE(at + 12) * TWO_32);
  }

  /** Entries held. */
  get size(): number {
    return this.seqs.size;
  }
}
