/**
 * The tokens a server's Retry carries (RFC 9000 §8.1.2): the client's address, the time and
 * its original destination ID, sealed with AES-128-GCM under a key that lives only in this
 * endpoint (the address as associated data), so that only we can make one, and one made for
 * another address, altered or expired does not open. Time is whatever clock the endpoint is
 * given: a token outlives neither the key nor the process.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Remote } from './endpoint-machine';

/** How long a Retry token proves an address: a round trip and a retransmission or two, with room. */
export const TOKEN_LIFETIME_MS = 10_000;
const NONCE = 12;
const TIME = 8;
const TAG = 16;

export class RetryTokens {
  private readonly key: Buffer;

  constructor(private readonly random: (length: number) => Buffer = randomBytes) {
    this.key = random(16);
  }

  /** A token for `remote`, made at `now`, proving `originalDcid` (the client's first destination ID). */
  seal(originalDcid: Buffer, remote: Remote, now: number): Buffer {
    const plain = Buffer.alloc(TIME + originalDcid.length);
    plain.writeDoubleBE(now, 0);
    originalDcid.copy(plain, TIME);
    const nonce = this.random(NONCE);
    const cipher = createCipheriv('aes-128-gcm', this.key, nonce);
    cipher.setAAD(addressOf(remote));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([nonce, sealed, cipher.getAuthTag()]);
  }

  /** The original destination ID a token of ours proves for `remote` at `now`; null if it is not ours, not for it, or expired. */
  open(token: Buffer, remote: Remote, now: number): Buffer | null {
    // An original destination ID is at least 8 bytes (RFC 9000 §7.2).
    if (token.length < NONCE + TIME + 8 + TAG) return null;
    try {
      const decipher = createDecipheriv('aes-128-gcm', this.key, token.subarray(0, NONCE));
      decipher.setAAD(addressOf(remote));
      decipher.setAuthTag(token.subarray(token.length - TAG));
      const plain = Buffer.concat([decipher.update(token.subarray(NONCE, token.length - TAG)), decipher.final()]);
      const age = now - plain.readDoubleBE(0);
      if (!(age >= 0 && age <= TOKEN_LIFETIME_MS)) return null;
      return plain.subarray(TIME);
    } catch {
      return null;
    }
  }
}

function addressOf(remote: Remote): Buffer {
  return Buffer.from(`${remote.address}:${remote.port}`);
}
