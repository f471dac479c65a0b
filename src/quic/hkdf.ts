/**
 * HKDF (RFC 5869) with SHA-256 and TLS 1.3's HKDF-Expand-Label (RFC 8446 §7.1): the one key
 * derivation both QUIC's packet protection (RFC 9001 §5) and the TLS key schedule use.
 * Node's hkdfSync does extract and expand in one call; TLS needs them apart.
 */
import { createHash, createHmac } from 'node:crypto';

export const HASH_LENGTH = 32;

export function hkdfExtract(salt: Uint8Array, ikm: Uint8Array): Buffer {
  return createHmac('sha256', salt).update(ikm).digest();
}

export function hkdfExpand(prk: Uint8Array, info: Uint8Array, length: number): Buffer {
  const blocks: Buffer[] = [];
  let previous = Buffer.alloc(0);
  for (let i = 1; blocks.length * HASH_LENGTH < length; i++) {
    previous = createHmac('sha256', prk).update(previous).update(info).update(Buffer.of(i)).digest();
    blocks.push(previous);
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** HKDF-Expand-Label(secret, label, context, length), the label without its "tls13 " prefix. */
export function hkdfExpandLabel(secret: Uint8Array, label: string, context: Uint8Array, length: number): Buffer {
  const fullLabel = Buffer.from(`tls13 ${label}`, 'latin1');
  const info = Buffer.alloc(2 + 1 + fullLabel.length + 1 + context.length);
  info.writeUInt16BE(length, 0);
  info[2] = fullLabel.length;
  fullLabel.copy(info, 3);
  info[3 + fullLabel.length] = context.length;
  Buffer.from(context).copy(info, 4 + fullLabel.length);
  return hkdfExpand(secret, info, length);
}

/** Derive-Secret(secret, label, transcript hash) of RFC 8446 §7.1. */
export function deriveSecret(secret: Uint8Array, label: string, transcriptHash: Uint8Array): Buffer {
  return hkdfExpandLabel(secret, label, transcriptHash, HASH_LENGTH);
}

export function sha256(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
}
