/**
 * What a transaction costs a block, in Agave's compute units (the cost-model crate:
 * `cost_model.rs`, `block_cost_limits.rs`, `transaction_cost.rs` `UsageCostDetails::sum`):
 * the block's limit and each writable account's are counted in these, and the scheduler's
 * priority divides the leader's reward by them (transaction_priority.rs).
 *
 * - signatures: 720 each, and each signature a precompile instruction verifies at its own
 *   price (secp256k1 6,690, ed25519 2,400, secp256r1 4,800);
 * - write locks: 300 per account the transaction may write (after Agave demotes invoked
 *   programs and reserved accounts to read-only);
 * - instruction data: all instructions' data bytes / 4, rounded down;
 * - execution: the compute-unit limit it asks for (SetComputeUnitLimit) or the default (3,000
 *   per builtin instruction, 200,000 per other, at most 1,400,000);
 * - loaded accounts data: 8 per 32 KiB page of its loaded-accounts limit
 *   (SetLoadedAccountsDataSizeLimit, else 64 MiB: 16,384).
 * Compute-budget instructions that do not parse, or one given twice, fail the transaction;
 * Agave then counts neither execution nor loaded data (`Err(_) => (0, 0)`).
 */
import bs58 from 'bs58';
import type { WireTransaction } from '../validation/wire-transaction';
import {
  BUILTINS,
  COMPUTE_BUDGET_PROGRAM,
  computeBudgetOf,
  isStaticWritable,
  SET_COMPUTE_UNIT_LIMIT,
  SET_COMPUTE_UNIT_PRICE,
} from './compute-budget';

export const SIGNATURE_COST = 720;
export const WRITE_LOCK_UNITS = 300;
export const INSTRUCTION_DATA_BYTES_COST = 4;
/** Agave's block limit (SIMD-0256) and per writable account (block_cost_limits.rs). */
export const MAX_BLOCK_UNITS = 60_000_000;
export const MAX_WRITABLE_ACCOUNT_UNITS = 24_000_000;

export const MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES = 64 * 1024 * 1024;
const ACCOUNT_DATA_COST_PAGE_SIZE = 32 * 1024;
const DEFAULT_HEAP_COST = 8;

const key = (address: string) => Buffer.from(bs58.decode(address)).toString('latin1');
const COMPUTE_BUDGET = COMPUTE_BUDGET_PROGRAM.toString('latin1');
const UPGRADEABLE_LOADER = key('BPFLoaderUpgradeab1e11111111111111111111111');
/** Precompiles: the price of each signature they verify (the count is their data's first byte). */
const PRECOMPILE_SIGNATURE_COST = new Map([
  [key('KeccakSecp256k11111111111111111111111111111'), 6_690],
  [key('Ed25519SigVerify111111111111111111111111111'), 2_400],
  [key('Secp256r1SigVerify1111111111111111111111111'), 4_800],
]);
/** Accounts no transaction may lock for writing (reserved_account_keys.rs): the builtins and the sysvars. */
const RESERVED = new Set([
  ...BUILTINS,
  ...[
    'Sysvar1111111111111111111111111111111111111',
    'SysvarC1ock11111111111111111111111111111111',
    'SysvarEpochSchedu1e111111111111111111111111',
    'SysvarFees111111111111111111111111111111111',
    'Sysvar1nstructions1111111111111111111111111',
    'SysvarRecentB1ockHashes11111111111111111111',
    'SysvarRent111111111111111111111111111111111',
    'SysvarRewards111111111111111111111111111111',
    'SysvarS1otHashes111111111111111111111111111',
    'SysvarS1otHistory11111111111111111111111111',
    'SysvarStakeHistory1111111111111111111111111',
    'SysvarLastRestartS1ot1111111111111111111111',
    'SysvarEpochRewards1111111111111111111111111',
    'Stake11111111111111111111111111111111111111',
    'Config1111111111111111111111111111111111111',
    'AddressLookupTab1e1111111111111111111111111',
  ].map(key),
]);

/** account_loader.rs TRANSACTION_ACCOUNT_BASE_SIZE: what each loaded account counts besides its data. */
export const TRANSACTION_ACCOUNT_BASE_SIZE = 64;

/** cost_model.rs calculate_loaded_accounts_data_size_cost: 8 per 32 KiB page of loaded account data, rounded up. */
export function loadedAccountsDataCost(bytes: number): number {
  return Math.ceil(bytes / ACCOUNT_DATA_COST_PAGE_SIZE) * DEFAULT_HEAP_COST;
}

/**
 * What a transaction that ran costs the block (cost_model.rs
 * `calculate_cost_for_executed_transaction`, the `costUnits` of its meta): its estimate with
 * the units it used for the limit it asked, and the account data it loaded (when known) for
 * its loaded-data limit.
 */
export function executedCost(estimate: TransactionCost, unitsConsumed: number, loadedBytes: number | undefined): number {
  const loaded = loadedBytes === undefined ? estimate.loadedAccountsData : loadedAccountsDataCost(loadedBytes);
  return estimate.total - estimate.execution - estimate.loadedAccountsData + Math.min(unitsConsumed, estimate.execution) + loaded;
}

export interface TransactionCost {
  readonly signature: number;
  readonly writeLock: number;
  readonly dataBytes: number;
  readonly execution: number;
  readonly loadedAccountsData: number;
  /** Their sum: what the block and each account it writes are charged. */
  readonly total: number;
  /** How many accounts it locks for writing (its static ones and those its lookups load). */
  readonly writeLocks: number;
}

export function transactionCost(wire: WireTransaction): TransactionCost {
  const signature = signatureCost(wire);
  const writeLocks = writableStaticIndexes(wire).length + wire.addressTableLookups.reduce((n, l) => n + l.writableIndexes.length, 0);
  const dataBytes = Math.floor(wire.instructions.reduce((n, ix) => n + ix.data.length, 0) / INSTRUCTION_DATA_BYTES_COST);
  const budget = budgetLimits(wire);
  const execution = budget === null ? 0 : budget.unitLimit;
  const loadedAccountsData = budget === null ? 0 : loadedAccountsDataCost(budget.loadedAccountsBytes);
  const writeLock = writeLocks * WRITE_LOCK_UNITS;
  return {
    signature,
    writeLock,
    dataBytes,
    execution,
    loadedAccountsData,
    total: signature + writeLock + dataBytes + execution + loadedAccountsData,
    writeLocks,
  };
}

/** The static accounts the transaction locks for writing: writable by its header, less invoked programs (unless the upgradeable loader is present) and reserved accounts. */
export function writableStaticIndexes(wire: WireTransaction): number[] {
  const keys = wire.staticAccountKeys.map((k) => k.toString('latin1'));
  const upgradeableLoaderPresent = keys.includes(UPGRADEABLE_LOADER);
  const invoked = new Set(wire.instructions.map((ix) => ix.programIdIndex));
  const writable: number[] = [];
  for (let index = 0; index < keys.length; index += 1) {
    if (!isStaticWritable(wire, index) || RESERVED.has(keys[index]!)) continue;
    if (invoked.has(index) && !upgradeableLoaderPresent) continue;
    writable.push(index);
  }
  return writable;
}

function signatureCost(wire: WireTransaction): number {
  let cost = wire.numRequiredSignatures * SIGNATURE_COST;
  for (const ix of wire.instructions) {
    const program = wire.staticAccountKeys[ix.programIdIndex]?.toString('latin1');
    const each = program === undefined ? undefined : PRECOMPILE_SIGNATURE_COST.get(program);
    if (each !== undefined) cost += (ix.data[0] ?? 0) * each;
  }
  return cost;
}

const SET_LOADED_ACCOUNTS_DATA_SIZE_LIMIT = 4;
const REQUEST_HEAP_FRAME = 1;

/** The limits its compute-budget instructions set, or null when they fail it (one that does not parse, or one given twice). */
function budgetLimits(wire: WireTransaction): { unitLimit: number; loadedAccountsBytes: number } | null {
  let loadedAccountsBytes: number | undefined;
  const seen = new Set<number>();
  for (const ix of wire.instructions) {
    if (wire.staticAccountKeys[ix.programIdIndex]?.toString('latin1') !== COMPUTE_BUDGET) continue;
    const kind = ix.data[0];
    const size = {
      [REQUEST_HEAP_FRAME]: 5,
      [SET_COMPUTE_UNIT_LIMIT]: 5,
      [SET_COMPUTE_UNIT_PRICE]: 9,
      [SET_LOADED_ACCOUNTS_DATA_SIZE_LIMIT]: 5,
    }[kind ?? -1];
    if (kind === undefined || size === undefined || ix.data.length < size || seen.has(kind)) return null;
    seen.add(kind);
    if (kind === SET_LOADED_ACCOUNTS_DATA_SIZE_LIMIT) loadedAccountsBytes = ix.data.readUInt32LE(1);
  }
  if (loadedAccountsBytes === 0) return null; // InvalidLoadedAccountsDataSizeLimit
  return {
    // The budget instructions are valid here, so the limit the fee is computed from is Agave's too.
    unitLimit: computeBudgetOf(wire).unitLimit,
    loadedAccountsBytes: Math.min(loadedAccountsBytes ?? MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES),
  };
}
