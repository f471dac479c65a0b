/**
 * `getPriorityFeeEstimate`'s params, parsed once at the edge, in Helius's shape
 * (`[{transaction | accountKeys, options}]`; atlas-priority-fee-estimator rpc_server.rs) with
 * Slipway's refusals: each names the parameter and says what is expected. Where Helius's
 * estimator answers otherwise, docs/API.md says so.
 */
import bs58 from 'bs58';
import { writableStaticAddresses } from './block-fees';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../validation/wire-transaction';
import { findBase64Defect } from '../validation/strict-base64';
import type { Level } from './fee-levels';
import { MAX_LOOKBACK_SLOTS } from './recent-fees';

/** Accounts one request may ask about (Helius: 500; bounded work per request here). */
export const MAX_ACCOUNTS = 128;

const PRIORITY_LEVELS: Record<string, Level> = {
  Min: 'min',
  Low: 'low',
  Medium: 'medium',
  High: 'high',
  VeryHigh: 'veryHigh',
  UnsafeMax: 'unsafeMax',
  Default: 'medium',
};
const REQUEST_FIELDS = new Set(['transaction', 'accountKeys', 'options']);
const OPTION_FIELDS = new Set([
  'transactionEncoding',
  'priorityLevel',
  'includeAllPriorityFeeLevels',
  'lookbackSlots',
  'includeVote',
  'recommended',
  'evaluateEmptySlotAsZero',
  'includeDetails',
]);
const CONFLICTS_WITH_RECOMMENDED = ['priorityLevel', 'includeAllPriorityFeeLevels', 'lookbackSlots', 'includeVote'];

export interface PriorityFeeRequest {
  /** The accounts asked about (base58): given, or the writable ones of the transaction. */
  readonly accounts: readonly string[];
  readonly level: Level | undefined;
  readonly allLevels: boolean;
  readonly recommended: boolean;
  readonly lookbackSlots: number;
  readonly includeVote: boolean;
  readonly emptySlotAsZero: boolean;
  readonly includeDetails: boolean;
}

/** The request, or why it is refused. */
export function parsePriorityFeeRequest(params: readonly unknown[]): PriorityFeeRequest | string {
  if (params.length > 1) return `getPriorityFeeEstimate takes one parameter, an object; got ${params.length}`;
  const request = params[0] ?? {};
  if (typeof request !== 'object' || Array.isArray(request))
    return 'params[0] must be an object: {transaction} or {accountKeys}, and options';
  const fields = request as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !REQUEST_FIELDS.has(name));
  if (unknown !== undefined) return `params[0].${unknown.slice(0, 40)} is not a field of the request (transaction, accountKeys, options)`;
  const optionsValue = fields.options ?? undefined;
  if (optionsValue !== undefined && (typeof optionsValue !== 'object' || optionsValue === null || Array.isArray(optionsValue)))
    return 'params[0].options must be an object';
  const options = (optionsValue ?? {}) as Record<string, unknown>;
  const unknownOption = Object.keys(options).find((name) => !OPTION_FIELDS.has(name));
  if (unknownOption !== undefined) return `params[0].options.${unknownOption.slice(0, 40)} is not an option of getPriorityFeeEstimate`;
  for (const name of ['includeAllPriorityFeeLevels', 'includeVote', 'recommended', 'evaluateEmptySlotAsZero', 'includeDetails']) {
    if (options[name] !== undefined && options[name] !== null && typeof options[name] !== 'boolean')
      return `params[0].options.${name} must be true or false`;
  }
  const present = (name: string) => options[name] !== undefined && options[name] !== null;
  if (fields.transaction != null && fields.accountKeys != null) return 'params[0] takes transaction or accountKeys, not both';
  if (present('recommended')) {
    const conflict = CONFLICTS_WITH_RECOMMENDED.find(present);
    if (conflict !== undefined) return `params[0].options.recommended cannot be combined with ${conflict}`;
  }
  // Own names only: `__proto__` or `constructor` must not reach the prototype's.
  const level =
    present('priorityLevel') && Object.hasOwn(PRIORITY_LEVELS, String(options.priorityLevel))
      ? PRIORITY_LEVELS[String(options.priorityLevel)]
      : undefined;
  if (present('priorityLevel') && (typeof options.priorityLevel !== 'string' || level === undefined))
    return `params[0].options.priorityLevel must be one of ${Object.keys(PRIORITY_LEVELS).join(', ')}; got ${JSON.stringify(options.priorityLevel).slice(0, 40)}`;
  const lookback = present('lookbackSlots') ? options.lookbackSlots : MAX_LOOKBACK_SLOTS;
  if (typeof lookback !== 'number' || !Number.isInteger(lookback) || lookback < 1 || lookback > MAX_LOOKBACK_SLOTS)
    return `params[0].options.lookbackSlots must be an integer from 1 to ${MAX_LOOKBACK_SLOTS}; got ${JSON.stringify(lookback).slice(0, 40)}`;
  const accounts = accountsOf(fields, options);
  if (typeof accounts === 'string') return accounts;
  // Helius's defaults change with the presence of options: without them votes count and empty slots do not.
  const withOptions = optionsValue !== undefined;
  return {
    accounts,
    level,
    allLevels: options.includeAllPriorityFeeLevels === true,
    recommended: options.recommended === true,
    lookbackSlots: lookback,
    includeVote: present('includeVote') ? options.includeVote === true : !withOptions,
    emptySlotAsZero: present('evaluateEmptySlotAsZero') ? options.evaluateEmptySlotAsZero === true : withOptions,
    includeDetails: options.includeDetails === true,
  };
}

function accountsOf(fields: Record<string, unknown>, options: Record<string, unknown>): string[] | string {
  if (fields.accountKeys != null) return addressesParam(fields.accountKeys, 'params[0].accountKeys');
  if (fields.transaction == null) return [];
  const encoding = options.transactionEncoding ?? 'base58';
  if (encoding !== 'base58' && encoding !== 'base64')
    return `params[0].options.transactionEncoding must be base58 or base64; got ${JSON.stringify(encoding).slice(0, 40)}`;
  const wire = transactionParam(fields.transaction, encoding, 'params[0].transaction');
  if (typeof wire === 'string') return wire;
  const accounts = writableStaticAddresses(wire);
  if (accounts.length > MAX_ACCOUNTS) return `params[0].transaction writes ${accounts.length} accounts; at most ${MAX_ACCOUNTS}`;
  return accounts;
}

/** A serialized transaction given as `name`, decoded, or why it is refused. */
export function transactionParam(value: unknown, encoding: 'base58' | 'base64', name: string): WireTransaction | string {
  if (typeof value !== 'string') return `${name} must be a string: a serialized transaction`;
  // A transaction is at most 1,232 bytes: 1,644 characters of base64, 1,684 of base58 (whose decoding costs the square of its length).
  const longest = encoding === 'base64' ? 1_644 : 1_684;
  if (value.length > longest)
    return `${name} is ${value.length} characters of ${encoding}; a transaction (1,232 bytes at most) takes at most ${longest}`;
  let bytes: Buffer;
  if (encoding === 'base64') {
    const defect = findBase64Defect(value);
    if (defect !== null) return `${name} is not valid base64: ${defect}`;
    bytes = Buffer.from(value, 'base64');
  } else {
    try {
      bytes = Buffer.from(bs58.decode(value));
    } catch {
      return `${name} is not valid base58`;
    }
  }
  const wire = parseWireTransaction(bytes);
  if (isWireDefect(wire)) return `${name} does not decode as a transaction: ${wire.detail}`;
  return wire;
}

/** Base58 account addresses given as `name`, at most MAX_ACCOUNTS, or why they are refused. */
export function addressesParam(keys: unknown, name: string): string[] | string {
  if (!Array.isArray(keys)) return `${name} must be an array of base58 account addresses`;
  if (keys.length > MAX_ACCOUNTS) return `${name} has ${keys.length} accounts; at most ${MAX_ACCOUNTS}`;
  for (const [i, key] of keys.entries()) {
    if (typeof key !== 'string' || !isAddress(key)) return `${name}[${i}] is not a base58 account address`;
  }
  return keys as string[];
}

function isAddress(text: string): boolean {
  if (text.length < 32 || text.length > 44) return false;
  try {
    return bs58.decode(text).length === 32;
  } catch {
    return false;
  }
}
