/**
 * One packet number space (RFC 9000 §12.3): its keys in each direction, the next packet
 * number, what was received (for ACKs) and sent (for loss recovery), and its CRYPTO stream.
 */
import { AckTracker } from './ack-tracker';
import { CryptoReceive, CryptoSend, MAX_AHEAD, MAX_INITIAL_AHEAD } from './crypto-streams';
import type { PacketKeys } from './packet-protection';
import { SentPackets, type SpaceName } from './recovery';
import type { EncryptionLevel } from './tls-session';

export class PacketSpace {
  sendKeys: PacketKeys | null = null;
  recvKeys: PacketKeys | null = null;
  nextPacketNumber = 0;
  readonly acks: AckTracker;
  readonly sent = new SentPackets();
  readonly cryptoOut = new CryptoSend();
  readonly cryptoIn: CryptoReceive;
  /** Keys thrown away (RFC 9001 §4.9): nothing is sent or accepted in this space any more. */
  discarded = false;
  /** Probe packets owed after a probe time-out (RFC 9002 §6.2.4). */
  probes = 0;

  constructor(
    readonly name: SpaceName,
    maxAckDelayMs: number,
  ) {
    this.acks = new AckTracker(name !== 'application', maxAckDelayMs);
    this.cryptoIn = new CryptoReceive(name === 'initial' ? MAX_INITIAL_AHEAD : MAX_AHEAD);
  }

  get level(): EncryptionLevel {
    return this.name;
  }
}
