import sodium from 'sodium-native';

const DIGEST_BYTES = 16;

/**
 * A cryptographic digest of a whole wire transaction (BLAKE2b-128, about 0.5 µs): what
 * duplicate detection keys on. Exact resubmissions skip signature verification on its word,
 * so it must be collision-resistant; a fast non-cryptographic hash would let a forged copy
 * pass as a known transaction.
 */
export function digestWireTransaction(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(DIGEST_BYTES);
  sodium.crypto_generichash(out, bytes);
  return out;
}
