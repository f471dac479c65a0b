/**
 * The native ed25519 verifier (native/ed25519) against libsodium: every verdict alike, one
 * signature at a time and in groups, over valid signatures, mutated ones and the encodings
 * libsodium refuses; and the one documented difference (the cofactored equation).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import sodium from 'sodium-native';
import { nativeEd25519, type NativeEd25519 } from '../../src/validation/native-ed25519';
import { ORDER, scalarKeyPair, SMALL_ORDER, torsionSignature } from '../helpers/torsion-signature';

function native(): NativeEd25519 {
  assert.ok(nativeEd25519 !== null, 'the native ed25519 verifier was not built (sh scripts/build-native.sh says why)');
  return nativeEd25519;
}

interface Signer {
  readonly key: Buffer;
  readonly secret: Buffer;
}

function signer(): Signer {
  const key = Buffer.alloc(32);
  const secret = Buffer.alloc(64);
  sodium.crypto_sign_keypair(key, secret);
  return { key, secret };
}

function sign(message: Buffer, by: Signer): Buffer {
  const signature = Buffer.alloc(64);
  sodium.crypto_sign_detached(signature, message, by.secret);
  return signature;
}

const libsodium = (signature: Buffer, message: Buffer, key: Buffer) => sodium.crypto_sign_verify_detached(signature, message, key) === true;

function addLittleEndian(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(32);
  let carry = 0;
  for (let i = 0; i < 32; i++) {
    const sum = a[i]! + b[i]! + carry;
    out[i] = sum & 0xff;
    carry = sum >> 8;
  }
  return out;
}

/** The ways a signature, key or message is spoilt: each gives a case libsodium refuses (or, rarely, accepts). */
const MUTATIONS: ((signature: Buffer, message: Buffer, key: Buffer, index: number) => [Buffer, Buffer, Buffer])[] = [
  (s, m, k, i) => [flip(s, i % 32, i), m, k], // R
  (s, m, k, i) => [flip(s, 32 + (i % 32), i), m, k], // s
  (s, m, k, i) => [s, m.length > 0 ? flip(m, i % m.length, i) : Buffer.from([1]), k],
  (s, m, k, i) => [s, m, flip(k, i % 32, i)],
  (s, m, k) => [Buffer.concat([s.subarray(0, 32), addLittleEndian(s.subarray(32), ORDER)]), m, k], // s + L
  (s, m, k, i) => [Buffer.concat([SMALL_ORDER[i % SMALL_ORDER.length]!, s.subarray(32)]), m, k],
  (s, m, k, i) => [s, m, SMALL_ORDER[i % SMALL_ORDER.length]!],
  (s, m, k, i) => {
    const sign = Buffer.from(SMALL_ORDER[i % SMALL_ORDER.length]!);
    sign[31]! |= 0x80; // the same points with the sign bit set
    return [Buffer.concat([sign, s.subarray(32)]), m, k];
  },
  (s, m) => [s, m, Buffer.from('eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex')], // y = p + 1, not canonical
  (s, m, k) => [
    Buffer.concat([Buffer.from('f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex'), s.subarray(32)]),
    m,
    k,
  ], // R's y above p
  (s, m, k) => [Buffer.concat([s.subarray(0, 63), Buffer.from([s[63]! | 0xe0])]), m, k], // s's high bits
  (_s, m, k) => [Buffer.alloc(64), m, k], // left blank
];

function flip(bytes: Buffer, at: number, seed: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at]! ^= 1 << (seed % 8);
  return copy;
}

/** Messages of every length around SHA-512's block boundaries, and transaction-sized ones. */
const LENGTHS = [0, 1, 31, 32, 64, 111, 112, 113, 127, 128, 129, 239, 240, 241, 255, 256, 300, 1232];

describe('the native ed25519 verifier, against libsodium', () => {
  it('gives libsodium’s verdict on 3,000 signatures: valid, mutated, small-order, non-canonical and blank', () => {
    const verifier = native();
    const signers = Array.from({ length: 6 }, signer);
    let valid = 0;
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      const message = crypto.randomBytes(LENGTHS[i % LENGTHS.length]!);
      const by = signers[i % signers.length]!;
      let args: [Buffer, Buffer, Buffer] = [sign(message, by), message, by.key];
      if (i % 4 !== 0) args = MUTATIONS[i % MUTATIONS.length]!(...args, i);
      const expected = libsodium(...args);
      assert.equal(verifier.verifyDetached(...args), expected, `case ${i} (mutation ${i % 4 === 0 ? 'none' : i % MUTATIONS.length})`);
      if (expected) valid++;
      else refused++;
    }
    assert.ok(valid >= 750 && refused >= 1500, `${valid} valid, ${refused} refused`);
  });

  it('verifies groups at once: 1 when every signature verifies, 0 when any one does not, read in place from shared memory', () => {
    const verifier = native();
    const signers = Array.from({ length: 4 }, signer);
    for (let round = 0; round < 120; round++) {
      const count = 1 + (round % 40);
      // Transactions of one to three signers, packed as the verification thread finds them in its slots.
      const packed: Buffer[] = [];
      for (let t = 0; t < count; t++) {
        const n = 1 + ((round + t) % 3);
        const message = crypto.randomBytes(LENGTHS[(round + t) % LENGTHS.length]!);
        const by = Array.from({ length: n }, (_, k) => signers[(t + k) % signers.length]!);
        packed.push(Buffer.concat([Buffer.from([n]), ...by.map((s) => sign(message, s)), ...by.map((s) => s.key), message]));
      }
      const spoil = round % 2 === 1;
      if (spoil) {
        const t = round % count;
        const n = packed[t]![0]!;
        const k = round % n;
        const message = packed[t]!.subarray(1 + n * 96);
        const [signature, , key] = MUTATIONS[round % MUTATIONS.length]!(
          packed[t]!.subarray(1 + k * 64, 65 + k * 64),
          message,
          packed[t]!.subarray(1 + n * 64 + k * 32, 1 + n * 64 + (k + 1) * 32),
          round,
        );
        signature.copy(packed[t]!, 1 + k * 64);
        key.copy(packed[t]!, 1 + n * 64 + k * 32);
      }
      const expected = packed.every((p) => {
        const n = p[0]!;
        const message = p.subarray(1 + n * 96);
        for (let k = 0; k < n; k++)
          if (!libsodium(p.subarray(1 + k * 64, 65 + k * 64), message, p.subarray(1 + n * 64 + k * 32, 1 + n * 64 + (k + 1) * 32)))
            return false;
        return true;
      });
      const memory = new Uint8Array(new SharedArrayBuffer(packed.reduce((sum, p) => sum + p.length + 7, 0)));
      const offsets = new Int32Array(count);
      const lengths = new Int32Array(count);
      let at = 3; // not aligned, and with gaps, as the slots may be
      packed.forEach((p, t) => {
        memory.set(p, at);
        offsets[t] = at;
        lengths[t] = p.length;
        at += p.length + 7;
      });
      assert.equal(
        verifier.verifyPacked(memory, offsets, lengths, count),
        expected ? 1 : 0,
        `round ${round}: ${count} transactions, ${spoil ? 'one spoilt' : 'all valid'}`,
      );
      if (!spoil) assert.equal(expected, true);
    }
  });

  it('refuses two bad signatures whose errors cancel unless each has a coefficient of its own, in groups of every size, batch after batch', () => {
    // A group is one equation: the sum over its signatures of z_i (s_i B - R_i - h_i A_i).
    // Adding d to one s and taking it from another leaves that sum at zero exactly when the
    // two z are equal: a verifier that gave two signatures of a group the same coefficient
    // would pass both. 300 groups draw about 160 KB of coefficients: the pool they come
    // from (4 KB) is refilled some forty times, at every offset.
    const verifier = native();
    const by = signer();
    const scalar = (op: 'add' | 'sub', x: Buffer, y: Buffer) => {
      const out = Buffer.alloc(32);
      (op === 'add' ? sodium.crypto_core_ed25519_scalar_add : sodium.crypto_core_ed25519_scalar_sub)(out, x, y);
      return out;
    };
    for (let round = 0; round < 300; round++) {
      const count = 2 + (round % 63);
      const packed = Array.from({ length: count }, () => {
        const message = crypto.randomBytes(40);
        return Buffer.concat([Buffer.from([1]), sign(message, by), by.key, message]);
      });
      const [i, j] = [round % count, (round * 7 + 1) % count];
      if (i === j) continue;
      const d = Buffer.alloc(32);
      sodium.crypto_core_ed25519_scalar_random(d);
      scalar('add', packed[i]!.subarray(33, 65), d).copy(packed[i]!, 33);
      scalar('sub', packed[j]!.subarray(33, 65), d).copy(packed[j]!, 33);
      for (const t of [i, j]) assert.equal(libsodium(packed[t]!.subarray(1, 65), packed[t]!.subarray(97), by.key), false);
      const memory = new Uint8Array(new SharedArrayBuffer(count * packed[0]!.length));
      packed.forEach((p, t) => memory.set(p, t * p.length));
      const offsets = Int32Array.from(packed, (p, t) => t * p.length);
      const lengths = Int32Array.from(packed, (p) => p.length);
      assert.equal(verifier.verifyPacked(memory, offsets, lengths, count), 0, `round ${round}: ${count} signatures, ${i} and ${j} spoilt`);
    }
  });

  it('refuses malformed packing without reading past the memory it was given', () => {
    const verifier = native();
    const memory = new Uint8Array(200);
    memory[0] = 3; // three signers would need 289 bytes
    assert.equal(verifier.verifyPacked(memory, Int32Array.of(0), Int32Array.of(200), 1), 0);
    assert.equal(verifier.verifyPacked(memory, Int32Array.of(150), Int32Array.of(100), 1), 0);
    assert.equal(verifier.verifyPacked(memory, Int32Array.of(-1), Int32Array.of(10), 1), 0);
    memory[0] = 0;
    assert.equal(verifier.verifyPacked(memory, Int32Array.of(0), Int32Array.of(200), 1), 0);
    assert.throws(() => verifier.verifyPacked(memory, Int32Array.of(0), Int32Array.of(200), 2), /verifyPacked/);
    assert.throws(() => verifier.verifyDetached('x' as unknown as Buffer, Buffer.alloc(1), Buffer.alloc(32)), /verifyDetached/);
    assert.equal(verifier.verifyDetached(Buffer.alloc(63), Buffer.alloc(1), Buffer.alloc(32)), false);
  });

  it('verifies a signature over an empty message as libsodium does, alone and as the end of a packed transaction', () => {
    const verifier = native();
    const by = signer();
    const empty = Buffer.alloc(0);
    const signature = sign(empty, by);
    assert.equal(libsodium(signature, empty, by.key), true);
    // A Uint8Array of no bytes has no data at all (its pointer may be NULL in C).
    for (const message of [empty, new Uint8Array(0), new Uint8Array(new ArrayBuffer(0))]) {
      assert.equal(verifier.verifyDetached(signature, message, by.key), true);
      assert.equal(verifier.verifyDetached(flip(signature, 40, 3), message, by.key), false);
    }
    assert.equal(verifier.verifyDetached(signature, Buffer.from([0]), by.key), libsodium(signature, Buffer.from([0]), by.key));
    const packed = Buffer.concat([Buffer.from([1]), signature, by.key]); // the message is what follows: nothing
    const two = Buffer.concat([packed, packed]);
    assert.equal(verifier.verifyPacked(two, Int32Array.of(0, 97), Int32Array.of(97, 97), 2), 1);
    const spoilt = Buffer.concat([packed, Buffer.from([1]), flip(signature, 5, 1), by.key]);
    assert.equal(verifier.verifyPacked(spoilt, Int32Array.of(0, 97), Int32Array.of(97, 97), 2), 0);
  });

  it('refuses a count that is not a whole number from 1 to what the offsets and lengths hold, saying what is wrong', () => {
    const verifier = native();
    const by = signer();
    const message = Buffer.from('a transfer');
    const packed = Buffer.concat([Buffer.from([1]), sign(message, by), by.key, message]);
    const memory = Buffer.concat([packed, packed]);
    const offsets = Int32Array.of(0, packed.length);
    const lengths = Int32Array.of(packed.length, packed.length);
    const refused = (count: unknown, name: string, message: RegExp, arrays: [Int32Array, Int32Array] = [offsets, lengths]) =>
      assert.throws(() => verifier.verifyPacked(memory, ...arrays, count as number), { name, message }, `count ${String(count)}`);
    refused(Number.NaN, 'RangeError', /verifyPacked: count must be a whole number of transactions, not NaN/);
    refused(Number.POSITIVE_INFINITY, 'RangeError', /whole number of transactions, not Infinity/);
    refused(Number.NEGATIVE_INFINITY, 'RangeError', /whole number of transactions, not -Infinity/);
    refused(1.5, 'RangeError', /whole number of transactions, not 1\.5/);
    refused(0, 'RangeError', /count must be at least 1 \(a group of none verifies nothing\), not 0/);
    refused(-1, 'RangeError', /at least 1 .*not -1/);
    refused(2 ** 32 + 1, 'RangeError', /count 4294967297 is more than the group holds: the offsets hold 2, the lengths 2/);
    refused(3, 'RangeError', /count 3 is more than the group holds: the offsets hold 2, the lengths 2/);
    refused(2, 'RangeError', /count 2 is more than the group holds: the offsets hold 2, the lengths 1/, [offsets, lengths.subarray(0, 1)]);
    refused(257, 'RangeError', /at most 256 are taken at once/, [new Int32Array(300), new Int32Array(300)]);
    refused('1', 'TypeError', /verifyPacked: count must be a number/);
    refused(undefined, 'TypeError', /verifyPacked: count must be a number/);
    // What it takes, it still verifies.
    assert.equal(verifier.verifyPacked(memory, offsets, lengths, 2), 1);
    assert.equal(verifier.verifyPacked(memory, offsets, lengths, 1), 1);
  });

  it('accepts, as the cofactored equation does, a signature whose R carries a point of order 8, which libsodium refuses', () => {
    const verifier = native();
    // Made by the key's own holder (test/helpers/torsion-signature.ts).
    const { a, key } = scalarKeyPair();
    const message = Buffer.from('a transfer');
    const { torsion: signature, honest } = torsionSignature(message, a, key);
    assert.equal(libsodium(signature, message, key), false);
    assert.equal(verifier.verifyDetached(signature, message, key), true);
    // The honest signature from the same nonce verifies under both.
    assert.equal(libsodium(honest, message, key), true);
    assert.equal(verifier.verifyDetached(honest, message, key), true);
  });
});
