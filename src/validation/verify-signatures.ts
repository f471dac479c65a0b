/**
 * Ed25519 verification of every signature of a wire transaction against its signer
 * (the first `numRequiredSignatures` account keys, in order). The gateway verifies with its
 * own verifier where it was built (native-ed25519.ts: cofactored, and many signatures at
 * once on the verification threads), else with libsodium; the ledger, standing in for the
 * cluster's validators, with libsodium (cofactorless, as they are). Tests cross-check both
 * against each other and libsodium against @noble/ed25519 (via @solana/web3.js).
 */
import sodium from 'sodium-native';
import { nativeEd25519 } from './native-ed25519';
import type { WireTransaction } from './wire-transaction';

export type SignatureCheck = { valid: true } | { valid: false; index: number; empty: boolean };

type VerifyOne = (signature: Buffer, message: Buffer, key: Buffer) => boolean;

const libsodiumVerify: VerifyOne = (signature, message, key) => sodium.crypto_sign_verify_detached(signature, message, key) === true;

/** The gateway's verification of one signature. */
export const verifySignature: VerifyOne = nativeEd25519 === null ? libsodiumVerify : (s, m, k) => nativeEd25519!.verifyDetached(s, m, k);

/** Verifies all signatures as the gateway does; reports the first that fails and whether it was left blank. */
export function verifyTransactionSignatures(tx: WireTransaction): SignatureCheck {
  return checkEach(tx, verifySignature);
}

/** Verifies all signatures as the cluster's validators do (libsodium: the cofactorless equation). */
export function verifyTransactionSignaturesAsValidators(tx: WireTransaction): SignatureCheck {
  return checkEach(tx, libsodiumVerify);
}

function checkEach(tx: WireTransaction, verify: VerifyOne): SignatureCheck {
  for (let i = 0; i < tx.signatures.length; i++) {
    const signature = tx.signatures[i]!;
    if (!verify(signature, tx.message, tx.staticAccountKeys[i]!)) return { valid: false, index: i, empty: isAllZero(signature) };
  }
  return { valid: true };
}

/** Whether a signature was left blank (all zeros): reported as unsigned rather than forged. */
export function isAllZero(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}
