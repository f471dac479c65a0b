/**
 * An ed25519 signature on which the two acceptance rules part: made by the key's own holder
 * with R' = rB + T (T of order 8) and s = r + H(R', A, M) a. The cofactored equation (Slipway's
 * native verifier) accepts it; libsodium's cofactorless check, the validators', refuses it.
 * See docs/SECURITY.md, "Which signatures pass".
 */
import crypto from 'node:crypto';
import sodium from 'sodium-native';

/** Encodings of the points of small order (the identity, order 2, 4 and 8), as libsodium lists them. */
export const SMALL_ORDER = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
].map((hex) => Buffer.from(hex, 'hex'));
/** L, the group's order, little-endian. */
export const ORDER = Buffer.from('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010', 'hex');

const toBig = (bytes: Buffer) => BigInt('0x' + Buffer.from(bytes).reverse().toString('hex'));
const fromBig = (value: bigint) => Buffer.from(value.toString(16).padStart(64, '0'), 'hex').reverse();

/** r + H(R, A, M) a (mod L): an ed25519 s computed by hand, for an R of the test's choosing. */
export function scalarFor(R: Buffer, key: Buffer, message: Buffer, r: Buffer, a: Buffer): Buffer {
  const h = toBig(crypto.createHash('sha512').update(R).update(key).update(message).digest());
  return fromBig((toBig(r) + h * toBig(a)) % toBig(ORDER));
}

/** A key pair given by its secret scalar `a` (not a seed) and public key aB. */
export function scalarKeyPair(): { a: Buffer; key: Buffer } {
  const a = Buffer.alloc(32);
  const key = Buffer.alloc(32);
  sodium.crypto_core_ed25519_scalar_random(a);
  sodium.crypto_scalarmult_ed25519_base_noclamp(key, a);
  return { a, key };
}

/** `message` signed by `a` (public `key`) twice from one nonce: with an order-8 component in R, and honestly. */
export function torsionSignature(message: Buffer, a: Buffer, key: Buffer): { torsion: Buffer; honest: Buffer } {
  const r = Buffer.alloc(32);
  sodium.crypto_core_ed25519_scalar_random(r);
  const rB = Buffer.alloc(32);
  sodium.crypto_scalarmult_ed25519_base_noclamp(rB, r);
  const R = Buffer.alloc(32);
  sodium.crypto_core_ed25519_add(R, rB, SMALL_ORDER[2]!);
  return {
    torsion: Buffer.concat([R, scalarFor(R, key, message, r, a)]),
    honest: Buffer.concat([rB, scalarFor(rB, key, message, r, a)]),
  };
}
