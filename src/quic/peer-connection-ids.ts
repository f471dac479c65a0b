/**
 * The peer's connection IDs and stateless reset tokens (RFC 9000 §5.1, §10.3): the IDs it
 * issued with NEW_CONNECTION_ID kept in reserve, the sequence of the one we address it by,
 * retirement (RETIRE_CONNECTION_ID, bounded), and whether a datagram that opened nothing is
 * a stateless reset. Its own file because this bookkeeping is one noun with its own limits,
 * apart from packets and recovery; the connection only hands it frames and datagrams.
 */
import type { Frame } from './frames';
import type { SentPackets } from './recovery';
import { encodeVarint, QuicError, TRANSPORT_ERROR } from './wire';

/** Connection IDs we keep of the peer's (active_connection_id_limit). */
export const CONNECTION_ID_LIMIT = 2;
/** Connection IDs retired and not yet acknowledged before the peer is refused (RFC 9000 §5.1.2). */
const MAX_RETIREMENTS_OUTSTANDING = 8;

export class PeerConnectionIds {
  /** The peer's stateless reset tokens: its transport parameter's (for the first ID), then one per connection ID it issued. */
  private peerResetToken: Buffer | undefined;
  private readonly resetTokensBySequence = new Map<number, Buffer>();
  private retiredBelow = 0;
  private readonly peerCids = new Map<number, Buffer>();
  private dcidSequence = 0;

  /**
   * `controls`: the connection's queue of control frames, where RETIRE_CONNECTION_ID goes;
   * `sent`: the application space's packets in flight, where retirements wait for an ACK.
   */
  constructor(
    private readonly controls: Buffer[],
    private readonly sent: SentPackets,
  ) {}

  /** The reset token of the peer's transport parameters, for the connection ID it chose in the handshake. */
  adoptResetToken(token: Buffer | undefined): void {
    this.peerResetToken = token;
  }

  isStatelessReset(datagram: Buffer): boolean {
    const tail = datagram.subarray(datagram.length - 16);
    if (this.dcidSequence === 0 && this.peerResetToken?.equals(tail) === true) return true;
    for (const token of this.resetTokensBySequence.values()) if (token.equals(tail)) return true;
    return false;
  }

  /**
   * NEW_CONNECTION_ID: kept for when the one in use is retired (we never migrate), its reset token noted.
   * `dcid` is the ID in use; `use` is called with the one to address the peer by when that one is retired.
   */
  receive(frame: Extract<Frame, { type: 'new-connection-id' }>, dcid: Buffer, use: (dcid: Buffer) => void): void {
    const known = frame.sequence === this.dcidSequence ? dcid : this.peerCids.get(frame.sequence);
    if (known !== undefined || this.retiredBelow > frame.sequence) {
      // Seen before (a retransmission) or retired already: nothing new (RFC 9000 §19.15).
      if (known !== undefined && !known.equals(frame.connectionId))
        throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, `connection ID sequence ${frame.sequence} sent twice with different IDs`);
    } else {
      this.peerCids.set(frame.sequence, Buffer.from(frame.connectionId));
      this.resetTokensBySequence.set(frame.sequence, Buffer.from(frame.resetToken));
    }
    if (frame.retirePriorTo > this.retiredBelow) {
      for (const sequence of [...this.peerCids.keys()]) if (sequence < frame.retirePriorTo) this.retire(sequence);
      if (this.dcidSequence < frame.retirePriorTo) {
        // The ID in use is retired: move to the oldest one left (RFC 9000 §5.1.2).
        this.retire(this.dcidSequence);
        const next = [...this.peerCids.entries()].sort((a, b) => a[0] - b[0])[0];
        if (next === undefined) throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, 'every connection ID of the peer was retired');
        this.dcidSequence = next[0];
        use(next[1]);
        this.peerCids.delete(next[0]);
      }
      this.retiredBelow = frame.retirePriorTo;
    }
    if (this.peerCids.size + 1 > CONNECTION_ID_LIMIT)
      throw new QuicError(
        TRANSPORT_ERROR.CONNECTION_ID_LIMIT_ERROR,
        `more connection IDs than active_connection_id_limit (${CONNECTION_ID_LIMIT})`,
      );
  }

  /** Retires a connection ID of the peer's: its reset token no longer counts, and RETIRE_CONNECTION_ID goes out. */
  private retire(sequence: number): void {
    this.peerCids.delete(sequence);
    this.resetTokensBySequence.delete(sequence);
    // A peer that retires faster than it acknowledges would make these pile up (RFC 9000 §5.1.2 lets us refuse).
    const outstanding = this.controls.filter((frame) => frame[0] === 0x19).length + this.retirementsInFlight();
    if (outstanding >= MAX_RETIREMENTS_OUTSTANDING)
      throw new QuicError(
        TRANSPORT_ERROR.CONNECTION_ID_LIMIT_ERROR,
        `more than ${MAX_RETIREMENTS_OUTSTANDING} connection IDs retired and not yet acknowledged`,
      );
    this.controls.push(Buffer.concat([Buffer.of(0x19), encodeVarint(sequence)]));
  }

  private retirementsInFlight(): number {
    let count = 0;
    for (const packet of this.sent.packets.values())
      for (const item of packet.items) if (item.kind === 'control' && item.frame[0] === 0x19) count++;
    return count;
  }
}
