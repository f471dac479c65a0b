/**
 * Parses the params of the three submission operations into typed values, once, at the
 * edge. Every refusal names the field and says what it must be.
 */
import { quote } from '../errors/client-text';
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import type { SendOptions } from '../upstreams/upstream';
import type { TransactionValidator } from '../validation/transaction-validator';
import type { ValidatedTransaction } from '../validation/validate-transaction';

/** The spec's limit for batches and bundles. */
export const MAX_TRANSACTIONS_PER_CALL = 5;
const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);

const invalid = (message: string) => fail<never>(slipwayError('INVALID_PARAMS', message));

export interface SendTransactionInput {
  readonly transaction: ValidatedTransaction;
  readonly options: SendOptions;
}

/** `sendTransaction`'s `[transaction, {encoding, skipPreflight, preflightCommitment, maxRetries, minContextSlot}]`. */
export async function parseSendTransactionParams(
  params: readonly unknown[],
  validator: TransactionValidator,
): Promise<Result<SendTransactionInput>> {
  if (params.length > 2) return invalid(`sendTransaction takes 2 params ([transaction, config]); got ${params.length}`);
  const encoded = params[0];
  if (typeof encoded !== 'string') return invalid('params[0] must be the signed transaction, a Base64 string');
  const config = parseEncodingConfig(params[1]);
  if (!config.ok) return config;
  const c = config.value;
  if (c.skipPreflight !== undefined && typeof c.skipPreflight !== 'boolean')
    return invalid('params[1].skipPreflight must be true or false');
  if (c.preflightCommitment !== undefined && !COMMITMENTS.has(c.preflightCommitment as string)) {
    return invalid('params[1].preflightCommitment must be "processed", "confirmed" or "finalized"');
  }
  for (const field of ['maxRetries', 'minContextSlot'] as const) {
    const value = c[field];
    if (value !== undefined && value !== null && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) {
      return invalid(`params[1].${field} must be a non-negative integer`);
    }
  }
  const transaction = await validator.validate(encoded, '');
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
export async function parseSendBundleParams(
  params: readonly unknown[],
  validator: TransactionValidator,
): Promise<Result<ValidatedTransaction[]>> {
  if (params.length > 2) return invalid(`sendBundle takes 2 params ([transactions, config]); got ${params.length}`);
  const list = transactionListShape(params[0], 'params[0]', 'bundle');
  if (!list.ok) return list;
  const config = parseEncodingConfig(params[1]);
  if (!config.ok) return config;
  return validateTransactionList(list.value, 'params[0]', validator, 'bundle');
}

/** `/submit-batch`'s `params: {transactions, options}`. */
export async function parseSubmitBatchParams(params: unknown, validator: TransactionValidator): Promise<Result<ValidatedTransaction[]>> {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    return invalid('params must be an object: {"transactions": [Base64 transaction, …], "options": []}');
  }
  const { transactions, options } = params as Record<string, unknown>;
  if (options === undefined) return invalid('params.options is required and must be an empty array [] (reserved for future use)');
  if (!Array.isArray(options) || options.length !== 0) {
    return invalid('params.options must be an empty array []: it is reserved for future use and takes no option yet');
  }
  const list = transactionListShape(transactions, 'params.transactions', 'batch');
  return list.ok ? validateTransactionList(list.value, 'params.transactions', validator, 'batch') : list;
}

function parseEncodingConfig(value: unknown): Result<Record<string, unknown>> {
  if (value === undefined) return invalid('params[1] is required: pass {"encoding": "base64"}');
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return invalid('params[1] must be an object: {"encoding": "base64"}');
  const config = value as Record<string, unknown>;
  if (config.encoding !== 'base64') {
    return invalid(
      config.encoding === undefined
        ? 'params[1].encoding is required and must be "base64"'
        : `params[1].encoding must be "base64" (got ${quote(config.encoding)})`,
    );
  }
  return ok(config);
}

/** The list's shape (an array of 1 to 5 strings), checked before anything after it in the params. */
function transactionListShape(value: unknown, field: string, kind: 'bundle' | 'batch'): Result<string[]> {
  if (!Array.isArray(value)) return invalid(`${field} must be an array of 1 to ${MAX_TRANSACTIONS_PER_CALL} Base64 transactions`);
  if (value.length === 0) return invalid(`${field} is empty: a ${kind} needs 1 to ${MAX_TRANSACTIONS_PER_CALL} transactions`);
  if (value.length > MAX_TRANSACTIONS_PER_CALL) {
    return invalid(`${field} has ${value.length} transactions; at most ${MAX_TRANSACTIONS_PER_CALL}`);
  }
  const notString = value.findIndex((encoded) => typeof encoded !== 'string');
  if (notString >= 0) return invalid(`${transactionLabel(field, notString)} must be a Base64 string`);
  return ok(value as string[]);
}

const transactionLabel = (field: string, index: number) => `transaction ${index + 1} (${field}[${index}])`;

async function validateTransactionList(
  list: readonly string[],
  field: string,
  validator: TransactionValidator,
  kind: 'bundle' | 'batch',
): Promise<Result<ValidatedTransaction[]>> {
  const label = (index: number) => transactionLabel(field, index);
  // All at once, so that verifications can run side by side; the first refusal in order wins.
  const results = await Promise.all(list.map((encoded, index) => validator.validate(encoded, label(index))));
  const validated: ValidatedTransaction[] = [];
  const positions = new Map<string, number>();
  for (const [index, result] of results.entries()) {
    if (!result.ok) return result;
    const earlier = positions.get(result.value.signature);
    if (earlier !== undefined) {
      return invalid(`${label(index)} repeats transaction ${earlier + 1}: a ${kind} cannot contain the same transaction twice`);
    }
    positions.set(result.value.signature, index);
    validated.push(result.value);
  }
  return ok(validated);
}
