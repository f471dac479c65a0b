/**
 * `simulateBundle` on the local ledgers, in Jito-Solana's RPC shape: the request as
 * validation/bundle-simulation-request.ts parses it; the answer `{ context, value: { summary,
 * transactionResults } }`, `summary` being `"succeeded"` or `{ failed: { error:
 * { TransactionFailure: [signature, message] }, tx_signature } }`, and one result per
 * transaction that ran (up to and including the one that failed) with its error, logs, units,
 * return data and the accounts asked for before and after it (base64, null where none).
 * Honoured: `transactionEncoding`, `skipSigVerify`, `replaceRecentBlockhash`, the accounts
 * configs; `simulationBank` is checked and moot: the ledger has one state, its latest.
 */
import bs58 from 'bs58';
import type { RpcAnswer } from '../core/rpc-types';
import { parseBundleSimulationRequest, type BundleSimulationRequest } from '../validation/bundle-simulation-request';
import { validateTransaction, type ValidatedTransaction } from '../validation/validate-transaction';
import type { AccountView } from './execution-outcome';
import type { LocalLedger } from './local-ledger';
import { encodeAccount, invalidParams, withContext } from './rpc-shapes';

export function simulateBundle(ledger: LocalLedger, params: readonly unknown[]): RpcAnswer {
  const request = parseBundleSimulationRequest(params);
  if (typeof request === 'string') return invalidParams(request);
  const txs: ValidatedTransaction[] = [];
  for (const [index, encoded] of request.encodedTransactions.entries()) {
    const parsed = validateTransaction(encoded, `transaction ${index}`, undefined, { encoding: request.encoding, verifySignatures: false });
    if (!parsed.ok) return invalidParams(parsed.error.message);
    if (txs.some((tx) => tx.signature === parsed.value.signature))
      return invalidParams(`the bundle contains transaction ${parsed.value.signature} twice`);
    txs.push(parsed.value);
  }
  return bundleSimulationAnswer(ledger, txs, request, !request.skipSigVerify);
}

/** The simulation of already parsed transactions (the gateway verified their signatures at its edge: `verifySignatures` false). */
export function bundleSimulationAnswer(
  ledger: LocalLedger,
  txs: readonly ValidatedTransaction[],
  request: BundleSimulationRequest,
  verifySignatures: boolean,
): RpcAnswer {
  const simulation = ledger.simulateBundle(txs, {
    preAccounts: request.preAccounts,
    postAccounts: request.postAccounts,
    replaceBlockhash: request.replaceRecentBlockhash,
    verifySignatures,
  });
  const failing = simulation.failedIndex === null ? undefined : simulation.results[simulation.failedIndex]!.outcome;
  const summary =
    failing === undefined
      ? 'succeeded'
      : { failed: { error: { TransactionFailure: [failing.signature, failing.errText ?? 'failed'] }, tx_signature: failing.signature } };
  const accounts = (list: (AccountView | null)[] | null) =>
    list === null ? null : list.map((account) => (account === null ? null : encodeAccount(account, 'base64')));
  const transactionResults = simulation.results.map((result) => ({
    err: result.outcome.err,
    logs: result.outcome.logs,
    preExecutionAccounts: accounts(result.preAccounts),
    postExecutionAccounts: accounts(result.postAccounts),
    unitsConsumed: result.outcome.unitsConsumed,
    returnData:
      result.returnData === null
        ? null
        : { programId: bs58.encode(result.returnData.programId), data: [Buffer.from(result.returnData.data).toString('base64'), 'base64'] },
  }));
  return withContext(ledger, { summary, transactionResults });
}
