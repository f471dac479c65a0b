/**
 * Slipway's own ed25519 verifier (native/ed25519, a Node-API addon built on install when a
 * C compiler is at hand): libsodium's checks on the encodings with the cofactored equation,
 * one signature at libsodium's cost or many at once for about half of it a signature. Null
 * where it was not built: verification then goes one signature at a time through libsodium.
 */
import path from 'node:path';

export interface NativeEd25519 {
  /** One signature, as libsodium's `crypto_sign_verify_detached` (cofactored). */
  verifyDetached(signature: Uint8Array, message: Uint8Array, key: Uint8Array): boolean;
  /**
   * Every signature of `count` packed transactions (verify-worker.ts's layout) at
   * `offsets`/`lengths` in `memory` (shared memory is read in place): 1 when all verify, 0
   * when one does not (which one is for a verification one at a time to say), -1 when the
   * system gave no randomness. `count` is a whole number from 1 to what both arrays hold
   * (256 at most): anything else throws a RangeError (a TypeError when it is not a number)
   * saying what is wrong, so that a group of none never reads as "all verify".
   */
  verifyPacked(memory: Uint8Array, offsets: Int32Array, lengths: Int32Array, count: number): number;
}

/** Where the addon is built, from dist/src/validation. */
export const NATIVE_ED25519_PATH = path.join(__dirname, '..', '..', '..', 'native', 'ed25519', 'build', 'Release', 'ed25519_batch.node');

function load(): NativeEd25519 | null {
  try {
    // A compiled addon is loaded by path, as `require` loads any .node file.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(NATIVE_ED25519_PATH) as NativeEd25519;
  } catch {
    return null;
  }
}

export const nativeEd25519: NativeEd25519 | null = load();
