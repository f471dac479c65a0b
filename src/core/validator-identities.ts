/** Validator identities as the leader schedule and its settings take them: checked, and the default ones. */
import crypto from 'node:crypto';
import bs58 from 'bs58';
import sodium from 'sodium-native';

/** Validators of the default schedule, when none are configured. */
export const DEFAULT_VALIDATOR_COUNT = 8;

/**
 * The 32-byte ed25519 seed of default validator `index` (from 0): sha256 of
 * `slipway validator N`. Public on purpose: the local cluster signs its TPU certificates with
 * these keys, and a test may too.
 */
export function defaultValidatorSeed(index: number): Buffer {
  return crypto
    .createHash('sha256')
    .update(`slipway validator ${index + 1}`)
    .digest();
}

/** `count` validator identities (real ed25519 public keys) derived from fixed seeds: the same on every machine. */
export function defaultValidatorIdentities(count = DEFAULT_VALIDATOR_COUNT): string[] {
  return Array.from({ length: count }, (_, i) => {
    const publicKey = Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES);
    sodium.crypto_sign_seed_keypair(publicKey, Buffer.alloc(sodium.crypto_sign_SECRETKEYBYTES), defaultValidatorSeed(i));
    return bs58.encode(publicKey);
  });
}

/** Throws, saying which and why, unless there is at least one identity and each is a distinct base58 public key. */
export function checkValidatorIdentities(identities: readonly string[]): void {
  if (identities.length === 0) throw new Error('a leader schedule needs at least one validator identity');
  for (const identity of identities) {
    let bytes: Uint8Array;
    try {
      bytes = bs58.decode(identity);
    } catch {
      throw new Error(`validator identity ${JSON.stringify(identity)} is not base58`);
    }
    if (bytes.length !== 32) throw new Error(`validator identity ${identity} is not 32 bytes (a public key)`);
  }
  if (new Set(identities).size !== identities.length) throw new Error('validator identities must be distinct');
}
