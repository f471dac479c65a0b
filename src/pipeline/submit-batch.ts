/**
 * `/submit-batch`: up to five independent transactions. Members already submitted (here, or
 * through another gateway) are not sent again; the others go to the route together (or are
 * held together when protected); one that fails leaves the others unaffected.
 */
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import { countTransactions } from '../metrics/metrics';
import { windowOptions } from '../protection/safe-window';
import type { SendOptions } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { ClusterClaims } from './cluster-claims';
import type { ProtectedSends } from './protected-sends';
import type { RecentTransactions } from './recent-transactions';
import { sendToRoute, stateAfter } from './route-send';
import type { Router } from './router';
import type { JournalRecorder } from './journal-recorder';
import type { Submitted, SubmissionContext } from './submission-shapes';

/** Batch members skip preflight: each is executed on its own and may fail on chain alone. */
const BATCH_SEND_OPTIONS: SendOptions = {
  skipPreflight: true,
  preflightCommitment: 'processed',
  maxRetries: undefined,
  minContextSlot: undefined,
};

export interface BatchDependencies {
  readonly router: Router;
  readonly recent: RecentTransactions;
  readonly claims: ClusterClaims;
  readonly recorder: JournalRecorder;
  readonly protectedSends: ProtectedSends;
}

export function createBatchSubmitter({ router, recent, claims, recorder, protectedSends }: BatchDependencies) {
  return async function submitBatch(
    txs: readonly ValidatedTransaction[],
    context: SubmissionContext,
  ): Promise<Result<Submitted<string[]>>> {
    const route = router.route('submitBatch', context.antiMev);
    if (!route.ok) return route;
    let fresh = txs.filter((tx) => !recent.includes(tx));
    let ids: string[] = [];
    if (claims.shared && fresh.length > 0) {
      const claimed = await claims.claim(fresh.map((tx) => tx.digest.toString('hex')));
      if (!claimed.ok) return claimed;
      // Members already submitted through another gateway are duplicates here too.
      fresh.forEach((tx, i) => {
        if (!claimed.value[i]) recent.remember(tx);
      });
      fresh = fresh.filter((_, i) => claimed.value[i]);
      ids = fresh.map((tx) => tx.digest.toString('hex'));
    }
    const receivedAt = Date.now();
    const decision =
      fresh.length > 0 && context.antiMev
        ? await protectedSends.holdUnlessSafe('batch', context, route.value, fresh, BATCH_SEND_OPTIONS, receivedAt)
        : undefined;
    if (decision === 'held') {
      claims.settle(ids, []);
      fresh.forEach((tx) => recent.remember(tx));
      countTransactions('submitBatch', fresh.length);
    } else if (fresh.length > 0) {
      const options = decision === undefined ? BATCH_SEND_OPTIONS : windowOptions(BATCH_SEND_OPTIONS, decision);
      const outcomes = await Promise.all(fresh.map((tx) => sendToRoute(route.value, tx, options)));
      await recorder.record(
        'batch',
        context,
        route.value,
        fresh,
        outcomes.map((o) => protectedSends.withEvidence(stateAfter(o), o, route.value, decision)),
      );
      const went = outcomes.map((o) => o.accepted > 0);
      claims.settle(
        ids.filter((_, i) => went[i]),
        ids.filter((_, i) => !went[i]),
      );
      if (!went.some(Boolean)) {
        return fail({
          ...slipwayError('UPSTREAM_UNAVAILABLE', `no upstream took the batch: ${outcomes[0]!.failures.join('; ')}`),
          journaled: true,
        });
      }
      fresh.forEach((tx, position) => {
        if (went[position]) recent.remember(tx);
      });
      countTransactions('submitBatch', fresh.length);
    }
    return ok({ value: txs.map((tx) => tx.signature), outcome: fresh.length === 0 ? 'duplicate' : 'accepted' });
  };
}
