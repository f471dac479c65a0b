/**
 * QUIC packet protection with AES-128-GCM (RFC 9001 §5): keys from a traffic secret, the
 * Initial secrets from the client's first destination connection ID, AEAD sealing and
 * opening with the packet number as nonce, header protection, key update, and the Retry
 * integrity tag. TLS_AES_128_GCM_SHA256 is the only suite Slipway offers (the only one
 * Firedancer accepts), so it is the only one here.
 */
import { createCipheriv, createDecipheriv, type Cipher } from 'node:crypto';
import { HASH_LENGTH, hkdfExpandLabel, hkdfExtract } from './hkdf';

const INITIAL_SALT_V1 = Buffer.from('38762cf7f55934b34d179ae6a4c80cadccbb7f0a', 'hex');
const RETRY_KEY_V1 = Buffer.from('be0c690b9f66575a1d766b54e368c84e', 'hex');
const RETRY_NONCE_V1 = Buffer.from('461599d35d632bf2239825bb', 'hex');
export const TAG_LENGTH = 16;
/** Header protection samples 16 bytes starting 4 bytes after the packet number's first byte. */
export const SAMPLE_OFFSET = 4;
const SAMPLE_LENGTH = 16;

export function initialSecrets(clientDestinationId: Uint8Array): { client: Buffer; server: Buffer } {
  const initial = hkdfExtract(INITIAL_SALT_V1, clientDestinationId);
  return {
    client: hkdfExpandLabel(initial, 'client in', Buffer.alloc(0), HASH_LENGTH),
    server: hkdfExpandLabel(initial, 'server in', Buffer.alloc(0), HASH_LENGTH),
  };
}

/** The secret of the next key phase (RFC 9001 §6.1). */
export function nextSecret(secret: Uint8Array): Buffer {
  return hkdfExpandLabel(secret, 'quic ku', Buffer.alloc(0), HASH_LENGTH);
}

/** Packet protection in one direction at one encryption level. */
export class PacketKeys {
  readonly key: Buffer;
  readonly iv: Buffer;
  readonly hp: Buffer;
  private readonly mask: Cipher;
  private readonly nonce: Buffer;

  constructor(
    readonly secret: Buffer,
    /** A key update keeps the header protection key (RFC 9001 §6). */
    hp?: Buffer,
  ) {
    this.key = hkdfExpandLabel(secret, 'quic key', Buffer.alloc(0), 16);
    this.iv = hkdfExpandLabel(secret, 'quic iv', Buffer.alloc(0), 12);
    this.hp = hp ?? hkdfExpandLabel(secret, 'quic hp', Buffer.alloc(0), 16);
    // ECB on one block is AES itself; one cipher object serves every packet.
    this.mask = createCipheriv('aes-128-ecb', this.hp, null).setAutoPadding(false);
    this.nonce = Buffer.alloc(12);
  }

  /** The keys of the next key phase. */
  next(): PacketKeys {
    return new PacketKeys(nextSecret(this.secret), this.hp);
  }

  private nonceFor(packetNumber: number): Buffer {
    this.iv.copy(this.nonce);
    // The packet number, left-padded to 12 bytes, XORed into the IV (2^53 is far beyond any connection).
    let pn = packetNumber;
    for (let i = 11; i >= 4 && pn > 0; i--) {
      this.nonce[i]! ^= pn & 0xff;
      pn = Math.floor(pn / 256);
    }
    return this.nonce;
  }

  /** The 5-byte header protection mask for the sample at `sampleAt` of `packet`. */
  headerMask(packet: Buffer, sampleAt: number): Buffer {
    return this.mask.update(packet.subarray(sampleAt, sampleAt + SAMPLE_LENGTH));
  }

  /**
   * Seals a packet: `header` (its packet number field unprotected, at `pnOffset`, `pnLength`
   * bytes) followed by the encrypted `payload` and its tag, then header protection applied.
   */
  seal(header: Buffer, pnOffset: number, pnLength: number, packetNumber: number, payload: Buffer): Buffer {
    const cipher = createCipheriv('aes-128-gcm', this.key, this.nonceFor(packetNumber));
    cipher.setAAD(header);
    const packet = Buffer.allocUnsafe(header.length + payload.length + TAG_LENGTH);
    header.copy(packet, 0);
    let at = header.length + cipher.update(payload).copy(packet, header.length);
    at += cipher.final().copy(packet, at);
    cipher.getAuthTag().copy(packet, at);
    const mask = this.headerMask(packet, pnOffset + SAMPLE_OFFSET);
    packet[0]! ^= mask[0]! & ((packet[0]! & 0x80) !== 0 ? 0x0f : 0x1f);
    for (let i = 0; i < pnLength; i++) packet[pnOffset + i]! ^= mask[1 + i]!;
    return packet;
  }

  /**
   * Opens `packet` (header protection already removed: `header` is its unprotected header,
   * `packetNumber` the decoded number). Returns the payload, or null if it does not authenticate.
   */
  open(header: Buffer, sealed: Buffer, packetNumber: number): Buffer | null {
    if (sealed.length < TAG_LENGTH) return null;
    const decipher = createDecipheriv('aes-128-gcm', this.key, this.nonceFor(packetNumber));
    decipher.setAAD(header);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_LENGTH));
    try {
      const first = decipher.update(sealed.subarray(0, sealed.length - TAG_LENGTH));
      const last = decipher.final();
      return last.length === 0 ? first : Buffer.concat([first, last]);
    } catch {
      return null;
    }
  }
}

/**
 * Removes header protection from `packet` (a copy is changed, not the datagram) and returns
 * the unprotected header, the truncated packet number and its length; null if the packet is
 * too short to sample.
 */
export function unprotectHeader(
  keys: PacketKeys,
  packet: Buffer,
  pnOffset: number,
): { header: Buffer; truncated: number; pnLength: number } | null {
  if (packet.length < pnOffset + SAMPLE_OFFSET + SAMPLE_LENGTH) return null;
  const mask = keys.headerMask(packet, pnOffset + SAMPLE_OFFSET);
  const long = (packet[0]! & 0x80) !== 0;
  const first = packet[0]! ^ (mask[0]! & (long ? 0x0f : 0x1f));
  const pnLength = (first & 0x03) + 1;
  const header = Buffer.from(packet.subarray(0, pnOffset + pnLength));
  header[0] = first;
  let truncated = 0;
  for (let i = 0; i < pnLength; i++) {
    header[pnOffset + i]! ^= mask[1 + i]!;
    truncated = truncated * 256 + header[pnOffset + i]!;
  }
  return { header, truncated, pnLength };
}

/** The full packet number from its truncated form (RFC 9000 Appendix A.3). */
export function decodePacketNumber(largest: number, truncated: number, pnLength: number): number {
  const expected = largest + 1;
  const window = 2 ** (pnLength * 8);
  const half = window / 2;
  const candidate = expected - (expected % window) + truncated;
  if (candidate <= expected - half && candidate < 2 ** 62 - window) return candidate + window;
  if (candidate > expected + half && candidate >= window) return candidate - window;
  return candidate;
}

/** How many bytes to send a packet number in: enough for twice the unacknowledged range (RFC 9000 Appendix A.2). */
export function packetNumberLength(packetNumber: number, largestAcked: number): 1 | 2 | 3 | 4 {
  const range = 2 * (largestAcked < 0 ? packetNumber + 1 : packetNumber - largestAcked);
  if (range < 2 ** 8) return 1;
  if (range < 2 ** 16) return 2;
  if (range < 2 ** 24) return 3;
  return 4;
}

/** The Retry integrity tag over the pseudo-packet (RFC 9001 §5.8). */
export function retryIntegrityTag(originalDestinationId: Uint8Array, retryWithoutTag: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-128-gcm', RETRY_KEY_V1, RETRY_NONCE_V1);
  cipher.setAAD(Buffer.concat([Buffer.of(originalDestinationId.length), originalDestinationId, retryWithoutTag]));
  cipher.final();
  return cipher.getAuthTag();
}
