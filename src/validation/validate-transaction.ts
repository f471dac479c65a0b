/**
 * The edge check of one Base64 transaction, in Agave's order, cheapest first: encoded
 * length, strict decoding, decoded size, deserialize, sanitize, and last the signatures.
 * Pure: no I/O. What passes is a `ValidatedTransaction` that the rest of Slipway uses
 * without decoding the bytes again.
 */
import bs58 from 'bs58';
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import { decodeStrictBase64 } from './strict-base64';
import { verifyTransactionSignatures } from './verify-signatures';
import type { WireTransaction } from './wire-transaction';
import { MAX_BASE64_SIZE, PACKET_DATA_SIZE, isWireDefect, parseWireTransaction, usesDurableNonce } from './wire-transaction';

/** Agave names the type it failed to decode in its messages; so do we, so texts match. */
const TYPE_NAME = 'solana_transaction::versioned::VersionedTransaction';

declare const validated: unique symbol;
/** A transaction that passed every edge check; only `validateTransaction` makes one. */
export interface ValidatedTransaction {
  readonly [validated]: true;
  readonly wire: WireTransaction;
  /** base58 of the first signature: the transaction's ID, as `sendTransaction` returns it. */
  readonly signature: string;
  readonly usesDurableNonce: boolean;
}

/** A cache of transactions already verified, keyed by first signature (see dedup). */
export interface KnownTransactions {
  /** The earlier validated transaction with exactly these bytes, if any. */
  findExact(firstSignature: Buffer, bytes: Buffer): ValidatedTransaction | undefined;
}

/**
 * Validates one Base64 wire transaction. `label` prefixes messages ("transactions[2]: …")
 * when the transaction is one of several. An exact resubmission of bytes already verified
 * skips verification: the same bytes cannot verify differently.
 */
export function validateTransaction(encoded: string, label: string, known?: KnownTransactions): Result<ValidatedTransaction> {
  const prefix = label === '' ? '' : `${label}: `;
  if (encoded.length > MAX_BASE64_SIZE) {
    return fail(
      slipwayError(
        'INVALID_PARAMS',
        `${prefix}base64 encoded ${TYPE_NAME} too large: ${encoded.length} bytes (max: encoded/raw ${MAX_BASE64_SIZE}/${PACKET_DATA_SIZE})`,
      ),
    );
  }
  const decoded = decodeStrictBase64(encoded);
  if (!decoded.ok) return fail(slipwayError('INVALID_PARAMS', prefix + decoded.error.message));
  const bytes = decoded.value;
  if (bytes.length > PACKET_DATA_SIZE) {
    return fail(slipwayError('INVALID_PARAMS', `${prefix}decoded ${TYPE_NAME} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`));
  }
  if (bytes.length === 0) return fail(slipwayError('INVALID_PARAMS', `${prefix}failed to deserialize ${TYPE_NAME}: the transaction is empty`));

  const wire = parseWireTransaction(bytes);
  if (isWireDefect(wire)) {
    switch (wire.stage) {
      case 'deserialize':
        return fail(slipwayError('INVALID_PARAMS', `${prefix}failed to deserialize ${TYPE_NAME}: ${wire.detail}`));
      case 'signatures':
        return fail(slipwayError('INVALID_PARAMS', `${prefix}transaction is not fully signed: ${wire.detail}`));
      case 'sanitize':
        return fail(
          slipwayError('INVALID_PARAMS', `${prefix}invalid transaction: Transaction failed to sanitize accounts offsets correctly (${wire.detail})`),
        );
    }
  }

  const earlier = known?.findExact(wire.signatures[0]!, bytes);
  if (earlier !== undefined) return ok(earlier);

  const check = verifyTransactionSignatures(wire);
  if (!check.valid) {
    const signer = bs58.encode(wire.staticAccountKeys[check.index]!);
    const why = check.empty
      ? `signature ${check.index} (signer ${signer}) is empty: the transaction is not fully signed`
      : `signature ${check.index} does not verify against signer ${signer}`;
    return fail(slipwayError('SIGNATURE_VERIFICATION_FAILURE', `${prefix}Transaction signature verification failure: ${why}`));
  }
  return ok({
    wire,
    signature: bs58.encode(wire.signatures[0]!),
    usesDurableNonce: usesDurableNonce(wire),
  } as ValidatedTransaction);
}

/**
 * Rebuilds a validated transaction from bytes Slipway itself verified and journaled
 * earlier (crash recovery). Parses again but does not verify: the journal is trusted.
 */
export function restoreValidatedTransaction(bytes: Buffer): ValidatedTransaction {
  const wire = parseWireTransaction(bytes);
  if (isWireDefect(wire)) throw new Error(`journaled transaction does not parse: ${wire.detail}`);
  return { wire, signature: bs58.encode(wire.signatures[0]!), usesDurableNonce: usesDurableNonce(wire) } as ValidatedTransaction;
}
