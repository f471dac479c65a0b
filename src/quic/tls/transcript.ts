/**
 * The transcript hash (RFC 8446 §4.4.1): SHA-256 over every handshake message so far, read
 * at several points (after ServerHello, CertificateVerify's input, each Finished) without
 * ending the running hash.
 */
import { createHash, type Hash } from 'node:crypto';

export class Transcript {
  private readonly hash: Hash = createHash('sha256');

  add(message: Uint8Array): void {
    this.hash.update(message);
  }

  /** The hash of the messages added so far. */
  current(): Buffer {
    return this.hash.copy().digest();
  }
}
