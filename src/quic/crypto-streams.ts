/**
 * The CRYPTO stream of one encryption level (RFC 9000 §19.6): handshake bytes to send, with
 * lost ranges sent again, and received bytes put back in order before TLS reads them. A peer
 * may send them out of order, twice or overlapping; it may not make us buffer without bound.
 */
import { QuicError, TRANSPORT_ERROR } from './wire';

/**
 * How far ahead of what TLS has read a peer may send at the Handshake and 1-RTT levels, where
 * certificates travel (RFC 9000 §7.5 asks for at least 4,096).
 */
export const MAX_AHEAD = 64 * 1024;
/**
 * The same at the Initial level: anyone can make an Initial that decrypts, so before the
 * handshake has gone anywhere a connection buffers what RFC 9000 §7.5 asks and no more. A
 * ClientHello or ServerHello that arrives in order is not held here at all.
 */
export const MAX_INITIAL_AHEAD = 4_096;

export class CryptoSend {
  private data = Buffer.alloc(0);
  /** The first byte never sent. */
  private sentUpTo = 0;
  private readonly lost: { offset: number; length: number }[] = [];

  push(bytes: Buffer): void {
    this.data = Buffer.concat([this.data, bytes]);
  }

  hasData(): boolean {
    return this.lost.length > 0 || this.sentUpTo < this.data.length;
  }

  /** The next piece to send, at most `max` bytes: lost ranges first. */
  next(max: number): { offset: number; data: Buffer } | null {
    if (max <= 0) return null;
    const lost = this.lost[0];
    if (lost !== undefined) {
      const length = Math.min(lost.length, max);
      const piece = { offset: lost.offset, data: this.data.subarray(lost.offset, lost.offset + length) };
      if (length === lost.length) this.lost.shift();
      else this.lost[0] = { offset: lost.offset + length, length: lost.length - length };
      return piece;
    }
    if (this.sentUpTo >= this.data.length) return null;
    const length = Math.min(this.data.length - this.sentUpTo, max);
    const piece = { offset: this.sentUpTo, data: this.data.subarray(this.sentUpTo, this.sentUpTo + length) };
    this.sentUpTo += length;
    return piece;
  }

  markLost(offset: number, length: number): void {
    this.lost.push({ offset, length });
  }

  /** Everything again from the start (after a Retry, the ClientHello goes out anew). */
  restart(): void {
    this.sentUpTo = 0;
    this.lost.length = 0;
  }

  /** The oldest bytes not known to be received, for a probe (RFC 9002 §6.2.4). */
  resendAll(): void {
    if (this.data.length > 0) this.lost.push({ offset: 0, length: Math.min(this.sentUpTo, this.data.length) });
  }
}

/** Holes a peer may leave in what it sends ahead; a handshake has a handful, an attack thousands. */
const MAX_RANGES = 1_024;

/**
 * Bytes ahead of what TLS has read are kept in a ring of `maxAhead` bytes (nothing ahead may
 * be further), allocated for the first piece out of order, and which of them arrived in a
 * sorted list of disjoint ranges: each frame costs a binary search and a copy, however the
 * peer orders or slices its data.
 */
export class CryptoReceive {
  constructor(private readonly maxAhead = MAX_AHEAD) {}

  private delivered = 0;
  private ring: Buffer | undefined;
  /** Received ranges past `delivered`, sorted, disjoint and not adjacent (absolute offsets, end exclusive). */
  private readonly ranges: { start: number; end: number }[] = [];

  /** Data at `offset`; returns what is now contiguous and new, in order (empty if nothing). */
  receive(offset: number, data: Buffer): Buffer {
    const end = offset + data.length;
    if (end > this.delivered + this.maxAhead)
      throw new QuicError(TRANSPORT_ERROR.CRYPTO_BUFFER_EXCEEDED, `CRYPTO data ${end - this.delivered} bytes ahead of what was read`);
    if (end <= this.delivered) return Buffer.alloc(0);
    const start = Math.max(offset, this.delivered);
    const fresh = data.subarray(start - offset);
    if (start === this.delivered && this.ranges.length === 0) {
      // In order, nothing held: the common case costs nothing more.
      this.delivered = end;
      return fresh;
    }
    this.store(start, fresh);
    this.insert(start, end);
    const first = this.ranges[0]!;
    if (first.start > this.delivered) return Buffer.alloc(0);
    this.ranges.shift();
    const out = this.read(this.delivered, first.end);
    this.delivered = first.end;
    return out;
  }

  private store(start: number, bytes: Buffer): void {
    this.ring ??= Buffer.alloc(this.maxAhead);
    const at = start % this.maxAhead;
    const first = Math.min(bytes.length, this.maxAhead - at);
    bytes.copy(this.ring, at, 0, first);
    if (first < bytes.length) bytes.copy(this.ring, 0, first);
  }

  private read(start: number, end: number): Buffer {
    const out = Buffer.allocUnsafe(end - start);
    const at = start % this.maxAhead;
    const first = Math.min(out.length, this.maxAhead - at);
    this.ring!.copy(out, 0, at, at + first);
    if (first < out.length) this.ring!.copy(out, first, 0, out.length - first);
    return out;
  }

  private insert(start: number, end: number): void {
    const ranges = this.ranges;
    // The first range that ends at or after `start` (it may touch or overlap the new one).
    let low = 0;
    let high = ranges.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (ranges[middle]!.end < start) low = middle + 1;
      else high = middle;
    }
    let last = low;
    let mergedStart = start;
    let mergedEnd = end;
    while (last < ranges.length && ranges[last]!.start <= end) {
      mergedStart = Math.min(mergedStart, ranges[last]!.start);
      mergedEnd = Math.max(mergedEnd, ranges[last]!.end);
      last++;
    }
    ranges.splice(low, last - low, { start: mergedStart, end: mergedEnd });
    if (ranges.length > MAX_RANGES)
      throw new QuicError(TRANSPORT_ERROR.CRYPTO_BUFFER_EXCEEDED, `CRYPTO data in more than ${MAX_RANGES} separate pieces`);
  }
}
