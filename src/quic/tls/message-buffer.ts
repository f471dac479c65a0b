/**
 * Cuts handshake messages out of one encryption level's CRYPTO stream: a message may arrive
 * in pieces or several at once (RFC 9001 §4.1.3). One buffer per level, because a message
 * never spans two levels and each level's stream is ordered on its own.
 */
import { ALERT, TlsAlert } from './alert';

/** Far above any message of this handshake (certificates included), far below what a peer could make us hold. */
export const MAX_HANDSHAKE_MESSAGE = 65_536;
/**
 * The same for the Initial level, where only a ClientHello or ServerHello travels (a few
 * hundred bytes here; under 2 KiB with a post-quantum key share), and where anyone who can
 * send UDP may write: it bounds what one connection holds before the handshake goes anywhere.
 */
export const MAX_INITIAL_MESSAGE = 16_384;
const HEADER = 4;

export interface HandshakeMessage {
  readonly type: number;
  readonly body: Buffer;
  /** The whole message, header included: what the transcript hashes. */
  readonly raw: Buffer;
}

export class HandshakeMessageBuffer {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxMessage = MAX_HANDSHAKE_MESSAGE) {}

  push(data: Buffer): void {
    this.pending = this.pending.length === 0 ? Buffer.from(data) : Buffer.concat([this.pending, data]);
  }

  /** The next whole message, or null until more bytes arrive. */
  next(): HandshakeMessage | null {
    if (this.pending.length < HEADER) return null;
    const length = this.pending.readUIntBE(1, 3);
    if (length > this.maxMessage)
      throw new TlsAlert(ALERT.decodeError, `a handshake message of ${length} bytes (at most ${this.maxMessage} at this level)`);
    if (this.pending.length < HEADER + length) return null;
    const raw = this.pending.subarray(0, HEADER + length);
    this.pending = this.pending.subarray(HEADER + length);
    return { type: raw[0]!, body: raw.subarray(HEADER), raw };
  }

  /** Bytes of a message not yet complete. */
  get buffered(): number {
    return this.pending.length;
  }
}
