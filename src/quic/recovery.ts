/**
 * Loss detection and congestion control (RFC 9002): the round-trip estimate, packets in
 * flight per packet number space, packet- and time-threshold loss, the probe time-out, and
 * NewReno's window. Pure: every method takes the time, nothing here reads a clock or a socket.
 */

export type SpaceName = 'initial' | 'handshake' | 'application';
export const SPACES: readonly SpaceName[] = ['initial', 'handshake', 'application'];

/** What a sent packet carried that must be sent again if it is lost (or is done with once acknowledged). */
export type SentItem =
  | { readonly kind: 'crypto'; readonly offset: number; readonly length: number }
  | { readonly kind: 'stream'; readonly streamId: number; readonly offset: number; readonly length: number; readonly fin: boolean }
  | { readonly kind: 'ack'; readonly largest: number }
  | { readonly kind: 'control'; readonly frame: Buffer }
  | { readonly kind: 'ping' };

export interface SentPacket {
  readonly packetNumber: number;
  readonly timeSent: number;
  readonly size: number;
  readonly ackEliciting: boolean;
  readonly inFlight: boolean;
  readonly items: SentItem[];
}

const PACKET_THRESHOLD = 3;
const TIME_THRESHOLD = 9 / 8;
const GRANULARITY_MS = 1;
const INITIAL_RTT_MS = 333;
const LOSS_REDUCTION = 0.5;
const PERSISTENT_CONGESTION_THRESHOLD = 3;

export class RttEstimator {
  latest = 0;
  smoothed = INITIAL_RTT_MS;
  variance = INITIAL_RTT_MS / 2;
  min = Infinity;
  private sampled = false;

  get hasSample(): boolean {
    return this.sampled;
  }

  /** RFC 9002 §5.3; `ackDelay` already capped at max_ack_delay once the handshake is confirmed. */
  update(latest: number, ackDelay: number): void {
    this.latest = latest;
    if (!this.sampled) {
      this.sampled = true;
      this.min = latest;
      this.smoothed = latest;
      this.variance = latest / 2;
      return;
    }
    this.min = Math.min(this.min, latest);
    const adjusted = latest >= this.min + ackDelay ? latest - ackDelay : latest;
    this.variance = 0.75 * this.variance + 0.25 * Math.abs(this.smoothed - adjusted);
    this.smoothed = 0.875 * this.smoothed + 0.125 * adjusted;
  }

  /** The probe time-out before back-off, without max_ack_delay. */
  pto(): number {
    return this.smoothed + Math.max(4 * this.variance, GRANULARITY_MS);
  }
}

/** NewReno (RFC 9002 §7) over bytes in flight. */
export class NewReno {
  window: number;
  bytesInFlight = 0;
  private threshold = Infinity;
  private recoveryStart = -Infinity;
  private readonly minimum: number;

  constructor(private readonly maxDatagram: number) {
    this.window = Math.min(10 * maxDatagram, Math.max(14_720, 2 * maxDatagram));
    this.minimum = 2 * maxDatagram;
  }

  canSend(bytes: number): boolean {
    return this.bytesInFlight + bytes <= this.window;
  }

  sent(bytes: number): void {
    this.bytesInFlight += bytes;
  }

  /** Bytes leave flight without a signal (keys discarded, a Retry). */
  removed(bytes: number): void {
    this.bytesInFlight = Math.max(0, this.bytesInFlight - bytes);
  }

  acked(packet: SentPacket): void {
    this.removed(packet.size);
    if (packet.timeSent <= this.recoveryStart) return;
    if (this.window < this.threshold) this.window += packet.size;
    else this.window += (this.maxDatagram * packet.size) / this.window;
  }

  lost(packets: readonly SentPacket[], now: number, persistent: boolean): void {
    let latest = -Infinity;
    for (const packet of packets) {
      this.removed(packet.size);
      latest = Math.max(latest, packet.timeSent);
    }
    if (latest > this.recoveryStart) {
      this.recoveryStart = now;
      this.threshold = Math.max(this.window * LOSS_REDUCTION, this.minimum);
      this.window = this.threshold;
    }
    if (persistent) this.window = this.minimum;
  }
}

/** The packets of one packet number space still awaiting acknowledgement. */
export class SentPackets {
  readonly packets = new Map<number, SentPacket>();
  largestAcked = -1;
  lossTime = Infinity;
  lastAckElicitingTime = -Infinity;
  ackElicitingInFlight = 0;

  add(packet: SentPacket): void {
    this.packets.set(packet.packetNumber, packet);
    if (packet.ackEliciting) {
      this.ackElicitingInFlight++;
      this.lastAckElicitingTime = packet.timeSent;
    }
  }

  private take(packetNumber: number): SentPacket | undefined {
    const packet = this.packets.get(packetNumber);
    if (packet === undefined) return undefined;
    this.packets.delete(packetNumber);
    if (packet.ackEliciting) this.ackElicitingInFlight--;
    return packet;
  }

  /**
   * Removes and returns the packets an ACK's ranges cover (ranges largest first, disjoint).
   * The cost is the smaller of the ranges' total width and the packets in flight, so that a
   * hostile ACK of wide ranges costs no more than the packets it could acknowledge.
   */
  acknowledge(ranges: readonly { smallest: number; largest: number }[]): SentPacket[] {
    const acked: SentPacket[] = [];
    let width = 0;
    for (const range of ranges) {
      width += range.largest - range.smallest + 1;
      if (width > this.packets.size) break;
    }
    if (width <= this.packets.size) {
      for (const range of ranges)
        for (let packetNumber = range.smallest; packetNumber <= range.largest; packetNumber++) {
          const packet = this.take(packetNumber);
          if (packet !== undefined) acked.push(packet);
        }
      return acked;
    }
    for (const packetNumber of [...this.packets.keys()]) if (covered(ranges, packetNumber)) acked.push(this.take(packetNumber)!);
    return acked;
  }

  /** RFC 9002 §6.1: the packets now deemed lost, and when the next one will be if none is acknowledged. */
  detectLost(now: number, rtt: RttEstimator): SentPacket[] {
    this.lossTime = Infinity;
    const delay = Math.max(TIME_THRESHOLD * Math.max(rtt.latest, rtt.smoothed), GRANULARITY_MS);
    const lost: SentPacket[] = [];
    for (const packet of this.packets.values()) {
      if (packet.packetNumber > this.largestAcked) continue;
      if (this.largestAcked >= packet.packetNumber + PACKET_THRESHOLD || packet.timeSent <= now - delay) lost.push(packet);
      else this.lossTime = Math.min(this.lossTime, packet.timeSent + delay);
    }
    for (const packet of lost) this.take(packet.packetNumber);
    return lost;
  }

  /** Everything in flight, dropped (keys discarded, a Retry). */
  clear(): SentPacket[] {
    const all = [...this.packets.values()];
    this.packets.clear();
    this.ackElicitingInFlight = 0;
    this.lossTime = Infinity;
    return all;
  }
}

/** Whether `packetNumber` lies in one of `ranges` (largest first): a binary search. */
function covered(ranges: readonly { smallest: number; largest: number }[], packetNumber: number): boolean {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const range = ranges[middle]!;
    if (packetNumber > range.largest) high = middle - 1;
    else if (packetNumber < range.smallest) low = middle + 1;
    else return true;
  }
  return false;
}

/** RFC 9002 §7.6: lost ack-eliciting packets spanning more than the persistent-congestion duration. */
export function isPersistentCongestion(lost: readonly SentPacket[], rtt: RttEstimator, maxAckDelay: number): boolean {
  if (!rtt.hasSample) return false;
  // A loop, not Math.min(...list): a list of lost packets may be longer than a call's arguments may be.
  let eliciting = 0;
  let first = Infinity;
  let last = -Infinity;
  for (const packet of lost) {
    if (!packet.ackEliciting) continue;
    eliciting++;
    if (packet.timeSent < first) first = packet.timeSent;
    if (packet.timeSent > last) last = packet.timeSent;
  }
  if (eliciting < 2) return false;
  const duration = (rtt.smoothed + Math.max(4 * rtt.variance, GRANULARITY_MS) + maxAckDelay) * PERSISTENT_CONGESTION_THRESHOLD;
  return last - first > duration;
}
