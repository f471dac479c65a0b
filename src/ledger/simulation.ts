/**
 * Running a transaction on the embedded ledger without committing anything: the preflight's
 * outcome, and `simulateTransaction`'s, which reports besides the accounts after, the
 * instructions programs invoked and the return data. The refusals a cluster makes before
 * running a transaction (blockhash, already processed) are the ledger's, made before these.
 */
import { FailedTransactionMetadata, type LiteSvm, type TransactionMetadata } from 'litesvm/dist/internal';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { failed, succeeded, viewOf, type ExecutionOutcome, type SimulationOutcome } from './execution-outcome';
import { loadedAddresses } from './lookup-tables';

/** The transaction's outcome, had it run now. */
export function simulateOutcome(svm: LiteSvm, tx: ValidatedTransaction): ExecutionOutcome {
  const result = simulateOnly(svm, tx);
  return result instanceof FailedTransactionMetadata ? failed(tx.signature, result) : succeeded(tx.signature, result.meta());
}

/** The outcome with what `simulateTransaction` may report of it; `refused`: the ledger's refusal, if it refused. */
export function simulateInDetail(svm: LiteSvm, tx: ValidatedTransaction, refused: ExecutionOutcome | undefined): SimulationOutcome {
  const loaded = loadedAddresses(svm, tx.wire);
  const accountKeys = [...tx.wire.staticAccountKeys, ...loaded.writable, ...loaded.readonly];
  if (refused !== undefined) return { ...refused, accountKeys, postAccounts: [], innerInstructions: [], returnData: null };
  const result = simulateOnly(svm, tx);
  if (result instanceof FailedTransactionMetadata)
    return { ...failed(tx.signature, result), accountKeys, postAccounts: [], ...detailsOf(result.meta()) };
  const meta = result.meta();
  const postAccounts = result.postAccounts().map((entry) => ({ address: entry.address, account: viewOf(entry.account()) }));
  return { ...succeeded(tx.signature, meta), accountKeys, postAccounts, ...detailsOf(meta) };
}

function simulateOnly(svm: LiteSvm, tx: ValidatedTransaction) {
  const bytes = tx.wire.bytes;
  return tx.wire.version === 'legacy' ? svm.simulateLegacyTransaction(bytes) : svm.simulateVersionedTransaction(bytes);
}

function detailsOf(meta: TransactionMetadata): Pick<SimulationOutcome, 'innerInstructions' | 'returnData'> {
  const innerInstructions = meta.innerInstructions().map((list) =>
    list.map((inner) => {
      const instruction = inner.instruction();
      return {
        programIdIndex: instruction.programIdIndex(),
        accounts: instruction.accounts(),
        data: instruction.data(),
        stackHeight: inner.stackHeight(),
      };
    }),
  );
  const returned = meta.returnData();
  const data = returned.data();
  return { innerInstructions, returnData: data.length === 0 ? null : { programId: returned.programId(), data } };
}
