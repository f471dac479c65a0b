/**
 * The gateway's edge validation: the cheap checks in the request's thread, signature
 * verification through a `SignatureVerifier` (in this thread, or on other cores), or not at
 * all where a trusted verifier stands in front (`verifySignatures: false`).
 */
import type { Result } from '../errors/error-catalogue';
import { fail, ok } from '../errors/error-catalogue';
import type { KnownTransactions, ValidatedTransaction } from './validate-transaction';
import { parseTransaction, signatureFailure } from './validate-transaction';
import type { SignatureCheck } from './verify-signatures';
import type { WireTransaction } from './wire-transaction';

/** Verifies every signature of a transaction against its signers. */
export interface SignatureVerifier {
  verify(wire: WireTransaction): Promise<SignatureCheck>;
  close(): Promise<void>;
}

export interface TransactionValidator {
  /** Every edge check of one Base64 transaction; `label` names it in messages when it is one of several. */
  validate(encoded: string, label: string): Promise<Result<ValidatedTransaction>>;
}

export function createTransactionValidator(known: KnownTransactions, verifier: SignatureVerifier | null): TransactionValidator {
  return {
    async validate(encoded, label) {
      const parsed = parseTransaction(encoded, label, known);
      if (!parsed.ok) return parsed;
      const { tx, verified } = parsed.value;
      if (verified || verifier === null) return ok(tx);
      const check = await verifier.verify(tx.wire);
      return check.valid ? ok(tx) : fail(signatureFailure(tx, check, label));
    },
  };
}
