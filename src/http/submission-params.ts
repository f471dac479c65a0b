/**
 * Parses the params of the three submission operations into typed values, once, at the
 * edge. Every refusal names the field and says what it must be.
 */
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import type { SendOptions } from '../upstreams/upstream';
import type { KnownTransactions, ValidatedTransaction } from '../validation/validate-transaction';
import { validateTransaction } from '../validation/validate-transaction';

/** The spec's limit for batches and bundles. */
export const MAX_TRANSACTIONS_PER_CALL = 5;
const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);

const invalid = (message: string) => fail<never>(slipwayError('INVALID_PARAMS', message));

export interface SendTransactionInput {
  readonly transaction: ValidatedTransaction;
  readonly options: SendOptions;
}

/** `sendTransaction`'s `[transaction, {encoding, skipPreflight, preflightCommitment, maxRetries, minContextSlot}]`. */
export function parseSendTransactionParams(params: readonly unknown[], known: KnownTransactions): Result<SendTransactionInput> {
  if (params.length > 2) return invalid(`sendTransaction takes 2 params ([transaction, config]); got ${params.length}`);
  const encoded = params[0];
  if (typeof encoded !== 'string') return invalid('params[0] must be the signed transaction, a Base64 string');
  const config = parseEncodingConfig(params[1]);
  if (!config.ok) return config;
  const c = config.value;
  if (c.skipPreflight !== undefined && typeof c.skipPreflight !== 'boolean') return invalid('params[1].skipPreflight must be true or false');
  if (c.preflightCommitment !== undefined && !COMMITMENTS.has(c.preflightCommitment as string)) {
    return invalid('params[1].preflightCommitment must be "processed", "confirmed" or "finalized"');
  }
  for (const field of ['maxRetries', 'minContextSlot'] as const) {
    const value = c[field];
    if (value !== undefined && value !== null && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) {
      return invalid(`params[1].${field} must be a non-negative integer`);
    }
  }
  const transaction = validateTransaction(encoded, '', known);
  if (!transaction.ok) return transaction;
  return ok({
    transaction: transaction.value,
    options: {
      skipPreflight: c.skipPreflight === true,
      preflightCommitment: (c.preflightCommitment as SendOptions['preflightCommitment'] | undefined) ?? 'finalized',
      maxRetries: (c.maxRetries as number | null | undefined) ?? undefined,
      minContextSlot: (c.minContextSlot as number | null | undefined) ?? undefined,
    },
  });
}

/** `sendBundle`'s `[[transaction, …], {encoding}]`. */
export function parseSendBundleParams(params: readonly unknown[], known: KnownTransactions): Result<ValidatedTransaction[]> {
  if (params.length > 2) return invalid(`sendBundle takes 2 params ([transactions, config]); got ${params.length}`);
  const config = parseEncodingConfig(params[1]);
  if (!config.ok) return config;
  return parseTransactionList(params[0], 'params[0]', known, 'bundle');
}

/** `/submit-batch`'s `params: {transactions, options}`. */
export function parseSubmitBatchParams(params: unknown, known: KnownTransactions): Result<ValidatedTransaction[]> {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    return invalid('params must be an object: {"transactions": [Base64 transaction, …], "options": []}');
  }
  const { transactions, options } = params as Record<string, unknown>;
  if (options === undefined) return invalid('params.options is required and must be an empty array [] (reserved for future use)');
  if (!Array.isArray(options) || options.length !== 0) {
    return invalid('params.options must be an empty array []: it is reserved for future use and takes no option yet');
  }
  return parseTransactionList(transactions, 'params.transactions', known, 'batch');
}

function parseEncodingConfig(value: unknown): Result<Record<string, unknown>> {
  if (value === undefined) return invalid('params[1] is required: pass {"encoding": "base64"}');
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return invalid('params[1] must be an object: {"encoding": "base64"}');
  const config = value as Record<string, unknown>;
  if (config.encoding !== 'base64') {
    return invalid(
      config.encoding === undefined
        ? 'params[1].encoding is required and must be "base64"'
        : `params[1].encoding must be "base64" (got ${JSON.stringify(config.encoding)})`,
    );
  }
  return ok(config);
}

function parseTransactionList(value: unknown, field: string, known: KnownTransactions, kind: 'bundle' | 'batch'): Result<ValidatedTransaction[]> {
  if (!Array.isArray(value)) return invalid(`${field} must be an array of 1 to ${MAX_TRANSACTIONS_PER_CALL} Base64 transactions`);
  if (value.length === 0) return invalid(`${field} is empty: a ${kind} needs 1 to ${MAX_TRANSACTIONS_PER_CALL} transactions`);
  if (value.length > MAX_TRANSACTIONS_PER_CALL) {
    return invalid(`${field} has ${value.length} transactions; at most ${MAX_TRANSACTIONS_PER_CALL}`);
  }
  const validated: ValidatedTransaction[] = [];
  const positions = new Map<string, number>();
  for (const [index, encoded] of value.entries()) {
    const label = `transaction ${index + 1} (${field}[${index}])`;
    if (typeof encoded !== 'string') return invalid(`${label} must be a Base64 string`);
    const tx = validateTransaction(encoded, label, known);
    if (!tx.ok) return tx;
    const earlier = positions.get(tx.value.signature);
    if (earlier !== undefined) {
      return invalid(`${label} repeats transaction ${earlier + 1}: a ${kind} cannot contain the same transaction twice`);
    }
    positions.set(tx.value.signature, index);
    validated.push(tx.value);
  }
  return ok(validated);
}
