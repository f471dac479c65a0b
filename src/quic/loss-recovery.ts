/**
 * Loss recovery across a connection's three packet number spaces (RFC 9002): packets sent
 * recorded, ACK frames applied (an RTT sample, the congestion window, what was delivered),
 * packets deemed lost and what they carried queued again, and the loss and probe timer with
 * its back-off. Its own file because it is the connection's one user of recovery.ts's parts
 * (RttEstimator, NewReno, SentPackets), which know one space each and nothing of the others.
 */
import type { Frame } from './frames';
import type { Assembled } from './packet-assembly';
import type { PacketSpace } from './packet-space';
import {
  isPersistentCongestion,
  SPACES,
  type NewReno,
  type RttEstimator,
  type SentItem,
  type SentPacket,
  type SpaceName,
} from './recovery';
import type { TransportParameters } from './transport-parameters';
import { QuicError, TRANSPORT_ERROR } from './wire';

type StreamPiece = Extract<SentItem, { kind: 'stream' }>;

/** What becomes of the stream data a packet carried: the role's streams know. */
export interface StreamPieces {
  acked(item: StreamPiece): void;
  lost(item: StreamPiece): void;
}

export class LossRecovery {
  packetsSent = 0;
  packetsLost = 0;
  /** Since when ack-eliciting packets have been in flight with none acknowledged (Infinity: none waiting). */
  unansweredSince = Infinity;
  private ptoCount = 0;
  private peer: TransportParameters | undefined;

  /** `controls`: the connection's queue of control frames, where lost ones go again. */
  constructor(
    private readonly role: 'client' | 'server',
    private readonly spaces: Record<SpaceName, PacketSpace>,
    private readonly rtt: RttEstimator,
    private readonly congestion: NewReno,
    private readonly controls: Buffer[],
    private readonly streams: StreamPieces,
  ) {}

  /** The peer's transport parameters: its ack_delay_exponent and max_ack_delay count from then on. */
  adoptPeerParameters(peer: TransportParameters): void {
    this.peer = peer;
  }

  /** The packets of a datagram just sent. */
  sent(packets: Assembled['packets'], now: number): void {
    for (const packet of packets) {
      // A packet that is neither ack-eliciting nor in flight (an ACK alone) needs no recovery: a
      // peer that never acknowledges must not make us keep every one.
      if (packet.sent.ackEliciting || packet.sent.inFlight) this.spaces[packet.space].sent.add(packet.sent);
      if (packet.sent.inFlight) this.congestion.sent(packet.sent.size);
      this.packetsSent++;
    }
    if (this.unansweredSince === Infinity && packets.some((packet) => packet.sent.ackEliciting)) this.unansweredSince = now;
  }

  receiveAck(space: PacketSpace, frame: Extract<Frame, { type: 'ack' }>, now: number, handshakeConfirmed: boolean): void {
    const largest = frame.ranges[0]!.largest;
    if (largest >= space.nextPacketNumber)
      throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, `an ACK of packet ${largest}, never sent`, 0x02);
    const acked = space.sent.acknowledge(frame.ranges);
    if (acked.length === 0) return;
    space.sent.largestAcked = Math.max(space.sent.largestAcked, largest);
    const newest = acked.find((packet) => packet.packetNumber === largest);
    if (newest !== undefined && acked.some((packet) => packet.ackEliciting)) {
      const peerDelay = (frame.delay * 2 ** (this.peer?.ackDelayExponent ?? 3)) / 1000;
      const delayMs =
        space.name === 'application' ? Math.min(peerDelay, handshakeConfirmed ? (this.peer?.maxAckDelay ?? 25) : Infinity) : 0;
      this.rtt.update(now - newest.timeSent, delayMs);
    }
    for (const packet of acked) {
      if (packet.inFlight) this.congestion.acked(packet);
      for (const item of packet.items) if (item.kind === 'stream') this.streams.acked(item);
    }
    this.detectLoss(space, now);
    this.ptoCount = 0;
    this.unansweredSince = SPACES.some((name) => this.spaces[name].sent.ackElicitingInFlight > 0) ? now : Infinity;
  }

  private detectLoss(space: PacketSpace, now: number): void {
    const lost = space.sent.detectLost(now, this.rtt);
    if (lost.length === 0) return;
    this.packetsLost += lost.length;
    this.requeue(space, lost);
    const inFlight = lost.filter((packet) => packet.inFlight);
    if (inFlight.length > 0) this.congestion.lost(inFlight, now, isPersistentCongestion(inFlight, this.rtt, this.peer?.maxAckDelay ?? 25));
  }

  /** What lost packets carried goes out again (RFC 9000 §13.3): data and control frames, never ACKs or PINGs. */
  private requeue(space: PacketSpace, packets: readonly SentPacket[]): void {
    for (const packet of packets) {
      for (const item of packet.items) {
        if (item.kind === 'crypto') space.cryptoOut.markLost(item.offset, item.length);
        else if (item.kind === 'stream') this.streams.lost(item);
        // PATH_RESPONSE is never sent again (RFC 9000 §13.3): the peer challenges anew if it still wants one.
        else if (item.kind === 'control' && item.frame[0] !== 0x1b) this.controls.push(item.frame);
      }
    }
  }

  /** A space's keys were discarded (RFC 9001 §4.9): what it had in flight leaves without a signal. */
  discarded(space: PacketSpace): void {
    for (const packet of space.sent.clear()) if (packet.inFlight) this.congestion.removed(packet.size);
    this.ptoCount = 0;
  }

  /** The probe time-out of a space before back-off, with the peer's max_ack_delay in the application space. */
  ptoDuration(name: SpaceName): number {
    return this.rtt.pto() + (name === 'application' ? (this.peer?.maxAckDelay ?? 25) : 0);
  }

  /**
   * When the loss or probe timer fires (RFC 9002 §6.2.1 and Appendix A.8); Infinity: not armed.
   * `lastSent`: when a datagram last went out; `established`: whether the application space may be probed.
   */
  deadline(lastSent: number, handshakeConfirmed: boolean, established: boolean): number {
    let earliest = Infinity;
    for (const name of SPACES) earliest = Math.min(earliest, this.spaces[name].sent.lossTime);
    if (earliest !== Infinity) return earliest;
    const backoff = 2 ** this.ptoCount;
    if (!SPACES.some((name) => this.spaces[name].sent.ackElicitingInFlight > 0)) {
      // A client arms the probe time-out until the handshake is confirmed, so that a lost server flight cannot deadlock it.
      if (this.role === 'server' || handshakeConfirmed) return Infinity;
      return lastSent + this.ptoDuration('initial') * backoff;
    }
    let pto = Infinity;
    for (const name of SPACES) {
      const space = this.spaces[name];
      if (space.sent.ackElicitingInFlight === 0 || space.discarded) continue;
      if (name === 'application' && !established) continue;
      pto = Math.min(pto, space.sent.lastAckElicitingTime + this.ptoDuration(name) * backoff);
    }
    return pto;
  }

  /** The timer of `deadline` fired: packets deemed lost by time, or else probes owed (RFC 9002 §6.1.2, §6.2.4). */
  expired(now: number): void {
    for (const name of SPACES) {
      const space = this.spaces[name];
      if (space.sent.lossTime <= now) return this.detectLoss(space, now);
    }
    // A probe time-out: one or two ack-eliciting packets in the space that timed out (RFC 9002 §6.2.4).
    this.ptoCount++;
    const probing = SPACES.find((name) => this.spaces[name].sent.ackElicitingInFlight > 0 && !this.spaces[name].discarded);
    const name = probing ?? (this.spaces.handshake.sendKeys !== null && !this.spaces.handshake.discarded ? 'handshake' : 'initial');
    const space = this.spaces[name];
    if (space.discarded || space.sendKeys === null) return;
    space.probes = 2;
    if (name !== 'application') space.cryptoOut.resendAll();
  }
}
