/**
 * A connection's three packet number spaces together (RFC 9000 §12.3) and the lifetime of
 * their keys: installed as the TLS handshake yields each level's secrets, with the CRYPTO
 * data it hands over (RFC 9001 §4.1), thrown away when the RFC says (§4.9); and when an ACK
 * is due in any of them. Its own file because the connection asks these questions of all
 * three spaces at once, where packet-space.ts holds one.
 */
import { PacketKeys } from './packet-protection';
import { PacketSpace } from './packet-space';
import { SPACES } from './recovery';
import type { TlsOutput } from './tls-session';

export class PacketSpaces {
  readonly initial: PacketSpace;
  readonly handshake: PacketSpace;
  readonly application: PacketSpace;

  /** `maxAckDelayMs`: how long we may hold an ACK in the application space (our max_ack_delay). */
  constructor(maxAckDelayMs: number) {
    this.initial = new PacketSpace('initial', maxAckDelayMs);
    this.handshake = new PacketSpace('handshake', maxAckDelayMs);
    this.application = new PacketSpace('application', maxAckDelayMs);
  }

  /** What TLS produced: packet keys for each level whose secrets it yielded (ours to seal, the peer's to open), and CRYPTO data to send. */
  applyTls(output: TlsOutput, role: 'client' | 'server'): void {
    for (const secrets of output.secrets) {
      const space = this[secrets.level];
      const [send, receive] = role === 'client' ? [secrets.client, secrets.server] : [secrets.server, secrets.client];
      space.sendKeys = new PacketKeys(send);
      space.recvKeys = new PacketKeys(receive);
    }
    for (const { level, data } of output.send) this[level].cryptoOut.push(data);
  }

  /** Throws a space's keys away: nothing is sent or accepted in it any more. False if it was already. */
  discard(name: 'initial' | 'handshake'): boolean {
    const space = this[name];
    if (space.discarded) return false;
    space.discarded = true;
    space.sendKeys = null;
    space.recvKeys = null;
    return true;
  }

  /** When an ACK must go out, in a space that has keys to send it with (Infinity: none due). */
  ackDeadline(): number {
    let deadline = Infinity;
    for (const name of SPACES) {
      const space = this[name];
      if (!space.discarded && space.sendKeys !== null) deadline = Math.min(deadline, space.acks.deadline());
    }
    return deadline;
  }
}
