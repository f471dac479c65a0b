/**
 * `sendBundle`: up to five transactions, all or nothing, to the route's block engines (or the
 * embedded ledger). A bundle that landed, sent again, is answered with its result and not
 * executed again; one an engine rejects whole is journaled `rejected` with why.
 */
import { computeBundleId } from '../core/bundle-id';
import { fail, ok, slipwayError, type Result, type SlipwayError } from '../errors/error-catalogue';
import { countTransactions } from '../metrics/metrics';
import type { BundleSendResult } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { ClusterClaims } from './cluster-claims';
import { failureBeforeSending } from './bundle-simulation-check';
import type { Router } from './router';
import type { JournalRecorder } from './journal-recorder';
import type { Submitted, BundleReceipt, SubmissionContext } from './submission-shapes';
import { TtlMap } from './ttl-map';

/** Landed bundles remembered for resubmissions (about 600 bytes each with five signatures). */
const MAX_LANDED_BUNDLES = 100_000;

export interface BundleDependencies {
  readonly router: Router;
  readonly claims: ClusterClaims;
  readonly recorder: JournalRecorder;
  /** How long a landed bundle's ID is remembered, so that resending it is answered, not re-executed. */
  readonly duplicateTtlMs: number;
  /** Whether a bundle is simulated first, and refused if it would fail (bundle-simulation-check.ts). */
  readonly simulateFirst: boolean;
}

export function createBundleSender({ router, claims, recorder, duplicateTtlMs, simulateFirst }: BundleDependencies) {
  const landedBundles = new TtlMap<string, BundleReceipt>(duplicateTtlMs, MAX_LANDED_BUNDLES);
  return async function sendBundle(
    txs: readonly ValidatedTransaction[],
    context: SubmissionContext,
  ): Promise<Result<Submitted<BundleReceipt>>> {
    const signatures = txs.map((tx) => tx.signature);
    const bundleId = computeBundleId(signatures);
    const landed = landedBundles.get(bundleId);
    if (landed !== undefined) return ok({ value: landed, outcome: 'duplicate' });
    const route = router.route('sendBundle', false);
    if (!route.ok) return route;
    for (const upstream of route.value) {
      let refusal: string | null;
      try {
        refusal = await upstream.admitBundle(txs);
      } catch (error) {
        return fail(slipwayError('UPSTREAM_UNAVAILABLE', `${upstream.name} cannot check the bundle: ${(error as Error).message}`));
      }
      if (refusal !== null) return fail(slipwayError('BUNDLE_NOT_ADMITTED', `${upstream.name} does not take this bundle: ${refusal}`));
    }
    const simulated = simulateFirst ? await failureBeforeSending(router, txs) : null;
    if (simulated !== null) return fail(bundleRejection(bundleId, signatures, simulated, 'simulated'));
    const claimId = `bundle:${bundleId}`;
    const claimed = await claims.claim([claimId]);
    if (!claimed.ok) return claimed;
    if (!claimed.value[0]) return ok({ value: { bundleId, signatures }, outcome: 'duplicate' });
    const results = await Promise.allSettled(route.value.map((upstream) => upstream.sendBundle(bundleId, txs)));
    const accepted = results.some((r) => r.status === 'fulfilled' && r.value.accepted);
    const rejection = results.find(
      (r): r is PromiseFulfilledResult<Extract<BundleSendResult, { accepted: false }>> => r.status === 'fulfilled' && !r.value.accepted,
    );
    const failures = results
      .map((r, i) => `${route.value[i]!.name}: ${r.status === 'rejected' ? (r.reason as Error).message : 'refused'}`)
      .join('; ');
    const error = accepted
      ? undefined
      : rejection !== undefined
        ? bundleRejection(bundleId, signatures, rejection.value)
        : slipwayError('UPSTREAM_UNAVAILABLE', `no upstream took the bundle: ${failures}`);
    const state =
      error === undefined
        ? { state: 'forwarded' as const }
        : rejection !== undefined
          ? { state: 'rejected' as const, reasonCode: 'engine_rejected' as const, reason: error.message }
          : { state: 'rejected' as const, reasonCode: 'upstream_unreachable' as const, reason: `no upstream took it: ${failures}` };
    await recorder.record(
      'bundle',
      context,
      route.value,
      txs,
      txs.map(() => state),
      bundleId,
    );
    claims.settle(error === undefined ? [claimId] : [], error === undefined ? [] : [claimId]);
    if (error !== undefined) return fail({ ...error, journaled: true });
    // Members are not remembered as sent alone: a block engine may still reject the bundle
    // (its statuses say so later), and each member must then be free to go again. A member
    // sent alone meanwhile is forwarded, and the network executes it at most once.
    const receipt = { bundleId, signatures };
    landedBundles.set(bundleId, receipt);
    countTransactions('sendBundle', txs.length);
    return ok({ value: receipt, outcome: 'accepted' });
  };
}

/** `simulated`: refused before sending, because the simulation says it fails (nothing was sent). */
function bundleRejection(
  bundleId: string,
  signatures: string[],
  outcome: { failedIndex: number; err: unknown; errText: string; logs: string[] },
  how: 'executed' | 'simulated' = 'executed',
): SlipwayError {
  const simulatedMark = how === 'simulated' ? { simulated: true } : {};
  const [verdict, ending] =
    how === 'simulated'
      ? ['Bundle refused before sending: in its simulation,', 'nothing was sent']
      : ['Bundle rejected:', "none of the bundle's transactions was processed"];
  if (outcome.failedIndex < 0) {
    return slipwayError('BUNDLE_REJECTED', `${verdict} ${outcome.errText}; ${ending}`, { bundleId, ...simulatedMark });
  }
  const position = outcome.failedIndex + 1;
  const failing = `transaction ${position} of ${signatures.length} (${signatures[outcome.failedIndex]})`;
  return slipwayError('BUNDLE_REJECTED', `${verdict} ${failing} failed: ${outcome.errText}; ${ending}`, {
    bundleId,
    failedTransactionIndex: outcome.failedIndex,
    err: outcome.err,
    logs: outcome.logs,
    ...simulatedMark,
  });
}
