/**
 * What the embedded ledger reports of a transaction it ran: the outcome shapes its callers
 * read, and their conversion from LiteSVM's metadata. Kept apart from LocalLedger so that
 * the ledger's class says what happens to a transaction, and this file what a result looks
 * like; LiteSVM's result types appear nowhere else.
 */
import type { Account, FailedTransactionMetadata, TransactionMetadata } from 'litesvm/dist/internal';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { LandedTransaction } from './block-history';
import { describeFieldlessError, describeTransactionError, type TransactionErrorJson } from '../core/transaction-error';

/**
 * Errors raised before a transaction executes: a cluster never includes such a transaction
 * in a block, so it gets no status (it is dropped), and no fee is charged.
 */
const NOT_INCLUDED = new Set([
  'AccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'SanitizeFailure',
  'AccountLoadedTwice',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'SignatureFailure',
  'UnsupportedVersion',
  'TooManyAccountLocks',
  'MissingSignatureForFee',
  'ProgramAccountNotFound',
  'InvalidProgramForExecution',
]);

export interface ExecutionOutcome {
  readonly signature: string;
  readonly err: TransactionErrorJson | null;
  /** Agave's display text of `err`, for messages. */
  readonly errText: string | null;
  readonly logs: string[];
  readonly unitsConsumed: number;
  /** False when the cluster would not have included it (no status, no fee). */
  readonly included: boolean;
  /** Balances of its accounts before and after, when it ran (static keys, then loaded writable, then loaded readonly). */
  readonly balances?: { readonly pre: number[]; readonly post: number[]; readonly loaded: { writable: string[]; readonly: string[] } };
  /** The account data it loaded, as Agave counts it against its cost (each account's data and 64 bytes), when it ran. */
  readonly loadedAccountsBytes?: number;
}

/** An instruction a program invoked, in the order they ran, with its depth (2: called by a top-level instruction). */
export interface InnerInstructionView {
  readonly programIdIndex: number;
  readonly accounts: Uint8Array;
  readonly data: Uint8Array;
  readonly stackHeight: number;
}

/** A simulation's outcome and what `simulateTransaction` may report of it. */
export interface SimulationOutcome extends ExecutionOutcome {
  /** The transaction's account keys: static, then loaded writable, then loaded readonly. */
  readonly accountKeys: readonly Uint8Array[];
  /** Its accounts as they would be after it, when it succeeded (empty when it failed). */
  readonly postAccounts: readonly { readonly address: Uint8Array; readonly account: AccountView }[];
  /** Per top-level instruction, the instructions it invoked. */
  readonly innerInstructions: readonly (readonly InnerInstructionView[])[];
  /** What the last program to set it returned, or null when none did. */
  readonly returnData: { readonly programId: Uint8Array; readonly data: Uint8Array } | null;
}

export type BundleOutcome =
  | { readonly landed: true; readonly slot: number; readonly outcomes: ExecutionOutcome[] }
  | { readonly landed: false; readonly failedIndex: number; readonly outcome: ExecutionOutcome };

export interface AccountView {
  readonly lamports: bigint;
  readonly data: Uint8Array;
  readonly owner: Uint8Array;
  readonly executable: boolean;
  readonly rentEpoch: bigint;
}

export function viewOf(account: Account): AccountView {
  return {
    lamports: account.lamports(),
    data: account.data(),
    owner: account.owner(),
    executable: account.executable(),
    rentEpoch: account.rentEpoch(),
  };
}

export function succeeded(signature: string, meta: TransactionMetadata): ExecutionOutcome {
  return { signature, err: null, errText: null, logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()), included: true };
}

export function failed(signature: string, result: FailedTransactionMetadata): ExecutionOutcome {
  const described = describeTransactionError(result.err());
  const meta = result.meta();
  return {
    signature,
    err: described.json,
    errText: described.text,
    logs: meta.logs(),
    unitsConsumed: Number(meta.computeUnitsConsumed()),
    included: typeof described.json !== 'string' || !NOT_INCLUDED.has(described.json),
  };
}

export function notIncluded(signature: string, name: 'AlreadyProcessed' | 'BlockhashNotFound' | 'SignatureFailure'): ExecutionOutcome {
  const described = describeFieldlessError(name);
  return { signature, err: described.json, errText: described.text, logs: [], unitsConsumed: 0, included: false };
}

/** What the block history keeps of a transaction that landed at `slot`. */
export function landedTransaction(tx: ValidatedTransaction, outcome: ExecutionOutcome, slot: number): LandedTransaction {
  const { pre, post, loaded } = outcome.balances ?? { pre: [], post: [], loaded: { writable: [], readonly: [] } };
  const sum = (list: number[]) => list.reduce((total, lamports) => total + lamports, 0);
  return {
    slot,
    wire: tx.wire.bytes,
    version: tx.wire.version,
    err: outcome.err,
    // Lamports only move between a transaction's own accounts: what they lost together is the fee.
    fee: Math.max(0, sum(pre) - sum(post)),
    preBalances: pre,
    postBalances: post,
    loadedAddresses: loaded,
    logs: outcome.logs,
    unitsConsumed: outcome.unitsConsumed,
    loadedAccountsBytes: outcome.loadedAccountsBytes,
  };
}
