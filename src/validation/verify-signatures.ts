/**
 * Ed25519 verification of every signature of a wire transaction against its signer
 * (the first `numRequiredSignatures` account keys, in order). libsodium through
 * sodium-native: the fastest verifier reachable from Node; a test cross-checks it
 * against @noble/ed25519's independent implementation (via @solana/web3.js).
 */
import sodium from 'sodium-native';
import type { WireTransaction } from './wire-transaction';

export type SignatureCheck = { valid: true } | { valid: false; index: number; empty: boolean };

/** Verifies all signatures; reports the first that fails and whether it was left blank. */
export function verifyTransactionSignatures(tx: WireTransaction): SignatureCheck {
  for (let i = 0; i < tx.signatures.length; i++) {
    const signature = tx.signatures[i]!;
    const signer = tx.staticAccountKeys[i]!;
    if (!sodium.crypto_sign_verify_detached(signature, tx.message, signer)) {
      return { valid: false, index: i, empty: isAllZero(signature) };
    }
  }
  return { valid: true };
}

/** Whether a signature was left blank (all zeros): reported as unsigned rather than forged. */
export function isAllZero(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}
