/**
 * The 1-RTT key phases of a connection (RFC 9001 §6): which phase we seal with, the keys of
 * the phase before (for late packets) and of the next (for the peer's update), and when we
 * update ourselves before the AEAD limit. Its own file because key update is a state machine
 * of its own, over the application space's keys, that nothing else in the connection touches.
 */
import type { PacketKeys } from './packet-protection';
import type { PacketSpace } from './packet-space';

/** Packets sealed under one 1-RTT key before a key update: half of AES-128-GCM's confidentiality limit, 2^23 (RFC 9001 §6.6). */
export const KEY_UPDATE_PACKETS = 2 ** 22;

export class KeyPhases {
  private keyPhase: 0 | 1 = 0;
  private nextRecvKeys: PacketKeys | null = null;
  /** The first packet number sealed under the current 1-RTT key. */
  private keyPhaseStart = 0;
  /** Whether the peer has sent in our current key phase (a new update may start only then). */
  private keyUpdateAnswered = true;
  private previousRecvKeys: PacketKeys | null = null;

  /** `space`: the application space, whose keys move from phase to phase. */
  constructor(private readonly space: PacketSpace) {}

  /** The key phase bit of the packets we seal. */
  get phase(): 0 | 1 {
    return this.keyPhase;
  }

  /** Opens a 1-RTT packet with the keys its key phase bit names, following a key update by the peer (RFC 9001 §6). */
  open(header: Buffer, sealed: Buffer, packetNumber: number, handshakeConfirmed: boolean): Buffer | null {
    const space = this.space;
    const phase = ((header[0]! >> 2) & 1) as 0 | 1;
    if (phase === this.keyPhase) {
      const payload = space.recvKeys!.open(header, sealed, packetNumber);
      // The peer sends in the phase we moved to: it has followed our update, and another may come later.
      if (payload !== null) this.keyUpdateAnswered = true;
      return payload;
    }
    // The other phase: a packet of the previous one (late, or the peer has not seen our update yet) …
    if (this.previousRecvKeys !== null) {
      const payload = this.previousRecvKeys.open(header, sealed, packetNumber);
      if (payload !== null || !this.keyUpdateAnswered) return payload;
    }
    // … or the peer's first of the next (RFC 9001 §6.3).
    if (!handshakeConfirmed) return null;
    this.nextRecvKeys ??= space.recvKeys!.next();
    const payload = this.nextRecvKeys.open(header, sealed, packetNumber);
    if (payload === null) return null;
    this.previousRecvKeys = space.recvKeys;
    space.recvKeys = this.nextRecvKeys;
    this.nextRecvKeys = null;
    space.sendKeys = space.sendKeys!.next();
    this.keyPhase = phase;
    this.keyPhaseStart = space.nextPacketNumber;
    return payload;
  }

  /** Our own key update, before the AEAD limit (RFC 9001 §6.6), once the peer followed the last one. */
  updateIfDue(handshakeConfirmed: boolean): void {
    const space = this.space;
    if (!handshakeConfirmed || !this.keyUpdateAnswered || space.sendKeys === null) return;
    if (space.nextPacketNumber - this.keyPhaseStart < KEY_UPDATE_PACKETS) return;
    this.previousRecvKeys = space.recvKeys;
    space.recvKeys = space.recvKeys!.next();
    this.nextRecvKeys = null;
    space.sendKeys = space.sendKeys.next();
    this.keyPhase = this.keyPhase === 0 ? 1 : 0;
    this.keyPhaseStart = space.nextPacketNumber;
    this.keyUpdateAnswered = false;
  }
}
