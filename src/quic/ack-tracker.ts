/**
 * The packet numbers received in one packet number space, as the ranges an ACK frame
 * reports (RFC 9000 §13.2), and when an acknowledgement is due: at once in the Initial and
 * Handshake spaces, after two ack-eliciting packets or `maxAckDelay` in the application space.
 * Duplicates are recognised here, so that a packet delivered twice is processed once.
 */
import type { AckRange } from './frames';

/** Ranges kept; a packet older than the oldest kept is treated as a duplicate (it is far behind). */
const MAX_RANGES = 64;

export class AckTracker {
  /** Largest first, disjoint, not adjacent. */
  private ranges: { smallest: number; largest: number }[] = [];
  private unackedEliciting = 0;
  /** When the first ack-eliciting packet not yet acknowledged arrived. */
  private dueSince = Infinity;
  private largestTime = 0;
  /** An acknowledgement must be sent with the next packet (a non-eliciting one may carry it too). */
  private pending = false;
  private floor = 0;

  constructor(
    private readonly immediate: boolean,
    private readonly maxAckDelay: number,
  ) {}

  /** Whether `packetNumber` was received already (then it is dropped unprocessed). */
  isDuplicate(packetNumber: number): boolean {
    if (packetNumber < this.floor) return true;
    for (const range of this.ranges) {
      if (packetNumber > range.largest) return false;
      if (packetNumber >= range.smallest) return true;
    }
    return false;
  }

  get largest(): number {
    return this.ranges.length === 0 ? -1 : this.ranges[0]!.largest;
  }

  received(packetNumber: number, ackEliciting: boolean, now: number): void {
    this.insert(packetNumber);
    if (packetNumber === this.largest) this.largestTime = now;
    this.pending = true;
    if (!ackEliciting) return;
    this.unackedEliciting++;
    if (this.dueSince === Infinity) this.dueSince = now;
  }

  private insert(packetNumber: number): void {
    const ranges = this.ranges;
    let i = 0;
    while (i < ranges.length && ranges[i]!.smallest > packetNumber + 1) i++;
    if (i === ranges.length || ranges[i]!.largest < packetNumber - 1) {
      ranges.splice(i, 0, { smallest: packetNumber, largest: packetNumber });
    } else {
      const range = ranges[i]!;
      range.smallest = Math.min(range.smallest, packetNumber);
      range.largest = Math.max(range.largest, packetNumber);
      // Joining the next (smaller) range when the gap closed.
      const next = ranges[i + 1];
      if (next !== undefined && next.largest + 1 >= range.smallest) {
        range.smallest = Math.min(range.smallest, next.smallest);
        ranges.splice(i + 1, 1);
      }
      const previous = ranges[i - 1];
      if (previous !== undefined && range.largest + 1 >= previous.smallest) {
        previous.smallest = Math.min(previous.smallest, range.smallest);
        ranges.splice(i, 1);
      }
    }
    if (ranges.length > MAX_RANGES) {
      ranges.length = MAX_RANGES;
      this.floor = ranges[MAX_RANGES - 1]!.smallest;
    }
  }

  /** When an ACK must go out even with nothing else to send (Infinity: not needed). */
  deadline(): number {
    if (this.unackedEliciting === 0) return Infinity;
    if (this.immediate || this.unackedEliciting >= 2) return this.dueSince;
    return this.dueSince + this.maxAckDelay;
  }

  /** Whether the next packet should carry an ACK. */
  wantsAck(): boolean {
    return this.pending;
  }

  /** The ranges to send, with the delay since the largest arrived (ms); marks them sent. */
  take(now: number): { ranges: AckRange[]; delayMs: number } | null {
    if (this.ranges.length === 0) return null;
    this.pending = false;
    this.unackedEliciting = 0;
    this.dueSince = Infinity;
    return { ranges: this.ranges.map((range) => ({ ...range })), delayMs: Math.max(0, now - this.largestTime) };
  }
}
