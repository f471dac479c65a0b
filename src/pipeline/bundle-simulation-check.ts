/**
 * A bundle simulated before it is sent (the `simulateBundles` setting), to a block engine or
 * the embedded ledger alike: one that would fail is refused at once, naming the failing
 * transaction, its error and its logs, instead of being sent to fail where nobody says why.
 * Every route then refuses a failing bundle the same way (`simulation_failed`, counted as a
 * refusal, nothing journaled); a bundle that passes its simulation and still fails when
 * executed is the route's rejection (`engine_rejected`). A transaction already processed is
 * no reason to refuse: the engine answers a resent landed bundle with its ID. Skipped when no
 * upstream simulates bundles or the simulation cannot be had (the bundle then goes
 * unsimulated: a simulator being down must not stop bundles).
 */
import { bundleSimulationParams } from '../validation/bundle-simulation-request';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { Router } from './router';

export interface SimulatedFailure {
  readonly failedIndex: number;
  readonly err: unknown;
  readonly errText: string;
  readonly logs: string[];
}

interface SimulateBundleValue {
  readonly summary: 'succeeded' | { readonly failed: { readonly error: unknown; readonly tx_signature?: string | null } };
  readonly transactionResults: readonly { readonly err: unknown; readonly logs: string[] | null }[];
}

/** What the simulation says fails, or null when it succeeds or cannot be had. */
export async function failureBeforeSending(router: Router, txs: readonly ValidatedTransaction[]): Promise<SimulatedFailure | null> {
  const params = bundleSimulationParams({
    encodedTransactions: txs.map((tx) => tx.wire.bytes.toString('base64')),
    encoding: 'base64',
    // Verified at the edge already.
    skipSigVerify: true,
    replaceRecentBlockhash: false,
    preAccounts: txs.map(() => null),
    postAccounts: txs.map(() => null),
  });
  let answer: Awaited<ReturnType<Router['simulateBundle']>>['answer'];
  try {
    answer = (await router.simulateBundle(params)).answer;
  } catch {
    return null;
  }
  if (answer === undefined || !('result' in answer)) return null;
  const value = (answer.result as { value?: SimulateBundleValue } | null)?.value;
  if (value === undefined || value.summary === 'succeeded' || typeof value.summary !== 'object') return null;
  const { error, tx_signature: signature } = value.summary.failed;
  const failedIndex = txs.findIndex((tx) => tx.signature === signature);
  const result = failedIndex < 0 ? undefined : value.transactionResults[failedIndex];
  // Already processed: a resend of a bundle that landed (its first answer lost) goes to the
  // engine, which answers a landed bundle with its ID; one partly landed it rejects whole.
  if (result?.err === 'AlreadyProcessed') return null;
  return { failedIndex, err: result?.err ?? error, errText: describeFailure(error), logs: result?.logs ?? [] };
}

/** Jito-Solana's `RpcBundleExecutionError` as a sentence: TransactionFailure carries [signature, message]. */
function describeFailure(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const failure = (error as { TransactionFailure?: unknown }).TransactionFailure;
    if (Array.isArray(failure) && typeof failure[1] === 'string') return failure[1];
    const [name, detail] = Object.entries(error)[0] ?? [];
    if (typeof name === 'string') return detail === undefined ? name : `${name}: ${JSON.stringify(detail)}`;
  }
  return typeof error === 'string' ? error : JSON.stringify(error);
}
