/**
 * A bundle run on the embedded ledger without committing anything: each transaction on the
 * state the previous ones left (LiteSVM commits as it goes), the accounts asked for read
 * before and after each, and every account the bundle could write put back at the end, as
 * `executeBundle` does when a bundle fails. No status, history or exposure is recorded.
 * Execution stops at the first transaction that fails, as a block engine's does.
 */
import { FailedTransactionMetadata, type LiteSvm, type TransactionMetadata } from 'litesvm/dist/internal';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { AccountSnapshot } from './account-snapshot';
import { failed, succeeded, viewOf, type AccountView, type ExecutionOutcome } from './execution-outcome';

export interface BundleSimulationOptions {
  /** Per transaction: the addresses whose accounts to report before / after it (null: none). */
  readonly preAccounts: readonly (readonly Uint8Array[] | null)[];
  readonly postAccounts: readonly (readonly Uint8Array[] | null)[];
}

export interface SimulatedTransaction {
  readonly outcome: ExecutionOutcome;
  readonly returnData: { readonly programId: Uint8Array; readonly data: Uint8Array } | null;
  /** The accounts asked for, before it ran (null where there was none); null when none were asked for. */
  readonly preAccounts: (AccountView | null)[] | null;
  /** The same after it ran; null when none were asked for or it failed. */
  readonly postAccounts: (AccountView | null)[] | null;
}

export interface BundleSimulation {
  /** One per transaction that ran: up to and including the one that failed. */
  readonly results: readonly SimulatedTransaction[];
  /** The index of the transaction that failed, or null when all succeeded. */
  readonly failedIndex: number | null;
}

/**
 * `refusal`: what the ledger refuses before running a transaction (an unknown blockhash, one
 * already processed), undefined when it would run it; `refused` outcomes stop the bundle too.
 */
export function simulateBundleOn(
  svm: LiteSvm,
  txs: readonly ValidatedTransaction[],
  options: BundleSimulationOptions,
  refusal: (tx: ValidatedTransaction) => ExecutionOutcome | undefined,
): BundleSimulation {
  const saved = AccountSnapshot.of(svm, txs);
  const results: SimulatedTransaction[] = [];
  try {
    for (const [index, tx] of txs.entries()) {
      const preAccounts = read(svm, options.preAccounts[index] ?? null);
      const refused = refusal(tx);
      const ran = refused === undefined ? run(svm, tx) : { outcome: refused, returnData: null };
      const failing = ran.outcome.err !== null;
      results.push({ ...ran, preAccounts, postAccounts: failing ? null : read(svm, options.postAccounts[index] ?? null) });
      if (failing) return { results, failedIndex: index };
    }
    return { results, failedIndex: null };
  } finally {
    saved.restore();
  }
}

function run(svm: LiteSvm, tx: ValidatedTransaction): Pick<SimulatedTransaction, 'outcome' | 'returnData'> {
  const bytes = tx.wire.bytes;
  const result = tx.wire.version === 'legacy' ? svm.sendLegacyTransaction(bytes) : svm.sendVersionedTransaction(bytes);
  if (result instanceof FailedTransactionMetadata)
    return { outcome: failed(tx.signature, result), returnData: returnDataOf(result.meta()) };
  return { outcome: succeeded(tx.signature, result), returnData: returnDataOf(result) };
}

function read(svm: LiteSvm, addresses: readonly Uint8Array[] | null): (AccountView | null)[] | null {
  if (addresses === null) return null;
  return addresses.map((address) => {
    const account = svm.getAccount(address);
    return account === null || account.lamports() === 0n ? null : viewOf(account);
  });
}

function returnDataOf(meta: TransactionMetadata): SimulatedTransaction['returnData'] {
  const returned = meta.returnData();
  const data = returned.data();
  return data.length === 0 ? null : { programId: returned.programId(), data };
}
