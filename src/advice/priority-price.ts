/**
 * Between Agave's scheduling priority and a compute-unit price. A leader orders what it holds
 * by reward × 1,000,000 / (cost + 1) (leader/scheduler-priority.ts), so the price that gives a
 * transaction some priority depends on its cost, its compute-unit limit and its signatures:
 * a transfer asking 600 units and one asking the default 6,000 need prices ten times apart.
 * The advice is learnt and answered in priorities, and turned into a price for the
 * transaction asked about here. No I/O.
 */
import {
  COMPUTE_BUDGET_PROGRAM,
  computeBudgetOf,
  feeDetailsOf,
  LAMPORTS_PER_SIGNATURE,
  SET_COMPUTE_UNIT_LIMIT,
  SET_COMPUTE_UNIT_PRICE,
} from '../leader/compute-budget';
import {
  loadedAccountsDataCost,
  MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES,
  SIGNATURE_COST,
  transactionCost,
  WRITE_LOCK_UNITS,
} from '../leader/cost-model';
import { leaderReward, schedulingPriority } from '../leader/scheduler-priority';
import type { WireTransaction } from '../validation/wire-transaction';

/** What the price of a transaction turns on: its cost to the block, its unit limit and its base fee. */
export interface PriceShape {
  readonly cost: number;
  readonly unitLimit: number;
  readonly baseFee: bigint;
}

/** A builtin instruction's units when no limit is set (SetComputeUnitPrice is one). */
const BUILTIN_UNITS = 3_000;
/** SetComputeUnitPrice's data: a tag and a u64. */
const SET_PRICE_DATA_BYTES = 9;

/**
 * The shape of `wire` once it sets a price: as it is when it has a SetComputeUnitPrice
 * instruction; else with one more (its data, and its 3,000 units when no limit is set).
 */
export function shapeOfWire(wire: WireTransaction): PriceShape {
  const cost = transactionCost(wire);
  const { unitLimit } = computeBudgetOf(wire);
  const { baseFee } = feeDetailsOf(wire);
  const budget = wire.instructions.filter((ix) => wire.staticAccountKeys[ix.programIdIndex]?.equals(COMPUTE_BUDGET_PROGRAM) === true);
  if (budget.some((ix) => ix.data[0] === SET_COMPUTE_UNIT_PRICE)) return { cost: cost.total, unitLimit, baseFee };
  const allData = wire.instructions.reduce((n, ix) => n + ix.data.length, 0);
  const dataCost = Math.floor((allData + SET_PRICE_DATA_BYTES) / 4) - cost.dataBytes;
  const limited = budget.some((ix) => ix.data[0] === SET_COMPUTE_UNIT_LIMIT);
  const added = limited ? 0 : BUILTIN_UNITS;
  return { cost: cost.total + dataCost + added, unitLimit: unitLimit + added, baseFee };
}

/**
 * The shape of a transaction known by the accounts it writes and its unit limit: one
 * signature, those write locks (at least the fee payer's), the limit, and the default
 * loaded-accounts limit (64 MiB: 16,384 units), the instruction data left out.
 */
export function shapeOfAccounts(writable: number, unitLimit: number): PriceShape {
  const cost =
    SIGNATURE_COST + WRITE_LOCK_UNITS * Math.max(1, writable) + unitLimit + loadedAccountsDataCost(MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES);
  return { cost, unitLimit, baseFee: LAMPORTS_PER_SIGNATURE };
}

/** The lowest price (micro-lamports a unit) that gives a transaction of `shape` at least `priority`. */
export function priceForPriority(priority: number, shape: PriceShape): number {
  if (shape.unitLimit === 0) return 0;
  const reward = Math.ceil((priority * (shape.cost + 1)) / 1_000_000);
  const kept = Number(leaderReward({ baseFee: shape.baseFee, priorityFee: 0n }));
  const priorityFee = Math.max(0, reward - kept);
  // Agave rounds the priority fee up (price × limit / 10⁶): the lowest price whose fee reaches it.
  return priorityFee === 0 ? 0 : Math.floor(((priorityFee - 1) * 1_000_000) / shape.unitLimit) + 1;
}

/** The priority a transaction of `shape` has at `price`: its fee rounded up as Agave rounds it (the inverse of priceForPriority, which may overshoot). */
export function priorityAtPrice(price: number, shape: PriceShape): number {
  const priorityFee = BigInt(Math.ceil((price * shape.unitLimit) / 1_000_000));
  return Number(schedulingPriority(leaderReward({ baseFee: shape.baseFee, priorityFee }), shape.cost));
}
