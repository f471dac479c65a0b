/**
 * `getLandingEstimate`'s params, parsed once at the edge: `[{transaction | accountKeys +
 * computeUnits, probability, withinSlots, bundle?}]`. The transaction is base64 (as
 * Slipway's sends take it); from it come the accounts it writes and what its price turns on
 * (priority-price.ts). Each refusal names the parameter and says what is expected.
 */
import { writableStaticAddresses } from './block-fees';
import { addressesParam, MAX_ACCOUNTS, transactionParam } from './priority-fee-request';
import { MAX_LOOKBACK_SLOTS } from './recent-fees';
import { shapeOfAccounts, shapeOfWire, type PriceShape } from './priority-price';

const FIELDS = new Set(['transaction', 'accountKeys', 'computeUnits', 'probability', 'withinSlots', 'bundle']);
/** Solana's most compute units a transaction may ask. */
const MAX_COMPUTE_UNITS = 1_400_000;
/** The chances advised for: a chance of 1 cannot be promised, and one under 1 % is no advice. */
const MIN_PROBABILITY = 0.01;
const MAX_PROBABILITY = 0.99;
const SHAPE = 'getLandingEstimate takes [{transaction (base64) or accountKeys and computeUnits, probability, withinSlots, bundle?}]';

export interface LandingEstimateRequest {
  readonly accounts: readonly string[];
  /** What its price turns on: its cost, unit limit and base fee. */
  readonly shape: PriceShape;
  readonly probability: number;
  readonly withinSlots: number;
  readonly bundle: boolean;
}

/** The request, or why it is refused. */
export function parseLandingEstimateRequest(params: readonly unknown[]): LandingEstimateRequest | string {
  if (params.length !== 1) return `${SHAPE}: got ${params.length} params`;
  const request = params[0];
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return `${SHAPE}: params[0] must be an object`;
  const fields = request as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !FIELDS.has(name));
  if (unknown !== undefined)
    return `params[0].${unknown.slice(0, 40)} is not a field of the request (transaction, accountKeys, computeUnits, probability, withinSlots, bundle)`;
  const { probability, withinSlots } = fields;
  if (typeof probability !== 'number' || !(probability >= MIN_PROBABILITY && probability <= MAX_PROBABILITY))
    return `params[0].probability must be a number from ${MIN_PROBABILITY} to ${MAX_PROBABILITY} (the chance of landing asked for); got ${JSON.stringify(probability ?? null).slice(0, 40)}`;
  if (typeof withinSlots !== 'number' || !Number.isInteger(withinSlots) || withinSlots < 1 || withinSlots > MAX_LOOKBACK_SLOTS)
    return `params[0].withinSlots must be an integer from 1 to ${MAX_LOOKBACK_SLOTS}; got ${JSON.stringify(withinSlots ?? null).slice(0, 40)}`;
  if (fields.bundle !== undefined && typeof fields.bundle !== 'boolean') return 'params[0].bundle must be true or false';
  const chance = { probability, withinSlots, bundle: fields.bundle === true };
  if (fields.transaction !== undefined) {
    if (fields.accountKeys !== undefined || fields.computeUnits !== undefined)
      return 'params[0] takes transaction, or accountKeys and computeUnits, not both';
    const wire = transactionParam(fields.transaction, 'base64', 'params[0].transaction');
    if (typeof wire === 'string') return wire;
    const accounts = writableStaticAddresses(wire);
    if (accounts.length > MAX_ACCOUNTS) return `params[0].transaction writes ${accounts.length} accounts; at most ${MAX_ACCOUNTS}`;
    return { accounts, shape: shapeOfWire(wire), ...chance };
  }
  if (fields.accountKeys === undefined) return `${SHAPE}: params[0] needs transaction, or accountKeys and computeUnits`;
  const accounts = addressesParam(fields.accountKeys, 'params[0].accountKeys');
  if (typeof accounts === 'string') return accounts;
  const { computeUnits } = fields;
  if (typeof computeUnits !== 'number' || !Number.isInteger(computeUnits) || computeUnits < 1 || computeUnits > MAX_COMPUTE_UNITS)
    return `params[0].computeUnits must be an integer from 1 to ${MAX_COMPUTE_UNITS} (the transaction's compute-unit limit); got ${JSON.stringify(computeUnits ?? null).slice(0, 40)}`;
  return { accounts, shape: shapeOfAccounts(accounts.length, computeUnits), ...chance };
}
