/**
 * The edge check of one Base64 transaction, in Agave's order, cheapest first: encoded
 * length, strict decoding, decoded size, deserialize, sanitize, and last the signatures.
 * Pure: no I/O. What passes is a `ValidatedTransaction` that the rest of Slipway uses
 * without decoding the bytes again.
 */
import bs58 from 'bs58';
import type { Result, SlipwayError } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import { encodeBase58 } from './base58';
import { digestWireTransaction } from './transaction-digest';
import { decodeStrictBase64 } from './strict-base64';
import { verifyTransactionSignatures, type SignatureCheck } from './verify-signatures';
import type { WireTransaction } from './wire-transaction';
import { MAX_BASE64_SIZE, PACKET_DATA_SIZE, isWireDefect, parseWireTransaction, usesDurableNonce } from './wire-transaction';

/** Agave names the type it failed to decode in its messages; so do we, so texts match. */
const TYPE_NAME = 'solana_transaction::versioned::VersionedTransaction';

declare const validated: unique symbol;
/** A transaction that passed every edge check; only `validateTransaction` makes one. */
export interface ValidatedTransaction {
  readonly [validated]: true;
  readonly wire: WireTransaction;
  /** The wire bytes in Base64, as upstreams take them (kept from the request: never encoded twice). */
  readonly base64: string;
  /** A cryptographic digest (16 bytes) of the whole wire bytes: what duplicate detection keys on. */
  readonly digest: Buffer;
  /** base58 of the first signature: the transaction's ID, as `sendTransaction` returns it. */
  readonly signature: string;
  readonly usesDurableNonce: boolean;
}

/** Transactions verified and accepted before, by digest of their exact bytes (see dedup). */
export interface KnownTransactions {
  has(digest: Buffer): boolean;
}

/** Agave's limit for base58-encoded transactions (MAX_BASE58_SIZE). */
const MAX_BASE58_SIZE = 1683;

export interface ValidationOptions {
  /** Base64 (Slipway's only encoding) or base58 (a Solana node's default, for the ledger node). */
  readonly encoding?: 'base64' | 'base58';
  /**
   * False only where a Solana node skips verification too (`simulateTransaction` without
   * `sigVerify`): the gateway verifies every transaction it accepts.
   */
  readonly verifySignatures?: boolean;
}

/**
 * A transaction that passed every check but its signatures: `verified` is true when it is an
 * exact resubmission of bytes verified before (the same bytes cannot verify differently).
 */
export type ParsedTransaction = { readonly tx: ValidatedTransaction; readonly verified: boolean };

/**
 * Every edge check up to, and not including, signature verification: encoded length,
 * decoding, decoded size, deserialize, sanitize. `label` prefixes messages
 * ("transaction 3 (…): …") when the transaction is one of several.
 */
export function parseTransaction(
  encoded: string,
  label: string,
  known?: KnownTransactions,
  options: ValidationOptions = {},
): Result<ParsedTransaction> {
  const prefix = label === '' ? '' : `${label}: `;
  const decoded = decodeTransaction(encoded, options.encoding ?? 'base64');
  if (!decoded.ok) return fail(slipwayError('INVALID_PARAMS', prefix + decoded.error.message));
  const bytes = decoded.value;
  if (bytes.length > PACKET_DATA_SIZE) {
    return fail(
      slipwayError('INVALID_PARAMS', `${prefix}decoded ${TYPE_NAME} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`),
    );
  }
  if (bytes.length === 0)
    return fail(slipwayError('INVALID_PARAMS', `${prefix}failed to deserialize ${TYPE_NAME}: the transaction is empty`));

  const wire = parseWireTransaction(bytes);
  if (isWireDefect(wire)) {
    switch (wire.stage) {
      case 'deserialize':
        return fail(slipwayError('INVALID_PARAMS', `${prefix}failed to deserialize ${TYPE_NAME}: ${wire.detail}`));
      case 'signatures':
        return fail(slipwayError('INVALID_PARAMS', `${prefix}transaction is not fully signed: ${wire.detail}`));
      case 'sanitize':
        return fail(
          slipwayError(
            'INVALID_PARAMS',
            `${prefix}invalid transaction: Transaction failed to sanitize accounts offsets correctly (${wire.detail})`,
          ),
        );
    }
  }
  const digest = digestWireTransaction(bytes);
  return ok({
    tx: {
      wire,
      base64: options.encoding === 'base58' ? bytes.toString('base64') : encoded,
      digest,
      signature: encodeBase58(wire.signatures[0]!),
      usesDurableNonce: usesDurableNonce(wire),
    } as ValidatedTransaction,
    verified: known?.has(digest) === true,
  });
}

/** The refusal for a transaction whose signature `check` failed. */
export function signatureFailure(tx: ValidatedTransaction, check: Extract<SignatureCheck, { valid: false }>, label: string): SlipwayError {
  const prefix = label === '' ? '' : `${label}: `;
  const signer = bs58.encode(tx.wire.staticAccountKeys[check.index]!);
  const why = check.empty
    ? `signature ${check.index} (signer ${signer}) is empty: the transaction is not fully signed`
    : `signature ${check.index} does not verify against signer ${signer}`;
  return slipwayError('SIGNATURE_VERIFICATION_FAILURE', `${prefix}Transaction signature verification failure: ${why}`);
}

/**
 * Validates one wire transaction, signatures included, in this thread. The gateway's hot
 * path uses a `TransactionValidator`, which may verify elsewhere.
 */
export function validateTransaction(
  encoded: string,
  label: string,
  known?: KnownTransactions,
  options: ValidationOptions = {},
): Result<ValidatedTransaction> {
  const parsed = parseTransaction(encoded, label, known, options);
  if (!parsed.ok) return parsed;
  const { tx, verified } = parsed.value;
  if (verified || options.verifySignatures === false) return ok(tx);
  const check = verifyTransactionSignatures(tx.wire);
  return check.valid ? ok(tx) : fail(signatureFailure(tx, check, label));
}

/** The encoded-length check and the decoding, with Agave's messages for each encoding. */
function decodeTransaction(encoded: string, encoding: 'base64' | 'base58'): Result<Buffer> {
  const max = encoding === 'base64' ? MAX_BASE64_SIZE : MAX_BASE58_SIZE;
  if (encoded.length > max) {
    return fail(
      slipwayError(
        'INVALID_PARAMS',
        `${encoding} encoded ${TYPE_NAME} too large: ${encoded.length} bytes (max: encoded/raw ${max}/${PACKET_DATA_SIZE})`,
      ),
    );
  }
  if (encoding === 'base64') return decodeStrictBase64(encoded);
  try {
    return ok(Buffer.from(bs58.decode(encoded)));
  } catch (error) {
    return fail(slipwayError('INVALID_PARAMS', `invalid base58 encoding: ${error instanceof Error ? error.message : String(error)}`));
  }
}

/**
 * Rebuilds a validated transaction from bytes Slipway itself verified and journaled
 * earlier (crash recovery). Parses again but does not verify: the journal is trusted.
 */
export function restoreValidatedTransaction(bytes: Buffer): ValidatedTransaction {
  const wire = parseWireTransaction(bytes);
  if (isWireDefect(wire)) throw new Error(`journaled transaction does not parse: ${wire.detail}`);
  return {
    wire,
    base64: bytes.toString('base64'),
    digest: digestWireTransaction(bytes),
    signature: encodeBase58(wire.signatures[0]!),
    usesDurableNonce: usesDurableNonce(wire),
  } as ValidatedTransaction;
}
