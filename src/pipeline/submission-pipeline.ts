/**
 * The submission pipeline: takes transactions that passed the edge checks and sees them
 * to their route. This file has `sendTransaction` and composes the rest, one file each:
 * batches (submit-batch.ts), bundles (send-bundle.ts), the preflight (preflight.ts), the
 * cluster's claims (cluster-claims.ts), journaling (journal-recorder.ts) and protected
 * sends (protected-sends.ts). Its order is the product's promise: duplicate check, preflight (unless
 * skipped), journal (durable: from here on nothing is lost), the route's upstreams, then
 * the tracker, which follows each transaction until it lands or expires.
 *
 * A protected (`anti_mev=1`) transaction or batch goes to its route only in a safe window
 * (protection/safe-window.ts); otherwise it is journaled `held`, answered, and sent by the
 * hold queue when a window opens. Each of its sends is journaled with its evidence.
 */
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import { preflightFailure } from '../errors/preflight-failure';
import { countTransactions } from '../metrics/metrics';
import { windowOptions, type SafeWindow } from '../protection/safe-window';
import { HashSlots } from '../runtime/hash-slots';
import type { DuplicateClaims } from '../stores/duplicate-claims';
import type { Journal } from '../stores/journal';
import type { SendOptions, Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { ClusterClaims } from './cluster-claims';
import type { HoldQueue } from './hold-queue';
import { preflight } from './preflight';
import { ProtectedSends } from './protected-sends';
import type { RecentTransactions } from './recent-transactions';
import { sendToRoute, stateAfter } from './route-send';
import type { Router } from './router';
import { createBundleSender } from './send-bundle';
import { createBatchSubmitter } from './submit-batch';
import { journalFailure, JournalRecorder } from './journal-recorder';
import type { SubmissionContext, SubmissionPipeline, Submitted } from './submission-shapes';
import type { LandingTracker } from './landing-tracker';

type Sent = Submitted<string>;

export interface PipelineDependencies {
  readonly router: Router;
  readonly journal: Journal;
  readonly recent: RecentTransactions;
  readonly tracker: LandingTracker;
  /** How long a landed bundle's ID is remembered, so that resending it is answered, not re-executed. */
  readonly duplicateTtlMs: number;
  /** Whether bundles are simulated before they are sent (the simulateBundles setting). */
  readonly simulateBundles: boolean;
  /** The journal's last sequence number when the pipeline starts. */
  readonly initialSeq: number;
  /** Anti-MEV protection: the safe-window rule, and where held transactions wait. */
  readonly protection: { readonly window: SafeWindow; readonly holds: HoldQueue };
  /** Duplicate detection shared with the other gateways of a cluster (absent: this gateway alone). */
  readonly claims?: DuplicateClaims;
}

export function createSubmissionPipeline({
  router,
  journal,
  recent,
  tracker,
  duplicateTtlMs,
  simulateBundles,
  initialSeq,
  protection,
  claims,
}: PipelineDependencies): SubmissionPipeline {
  const recorder = new JournalRecorder(journal, tracker, initialSeq);
  // The slot is read from the tracker's watch, never asked for: a request waits for nothing more.
  const received = (context: SubmissionContext): SubmissionContext => ({
    keyId: context.keyId,
    antiMev: context.antiMev,
    receivedSlot: tracker.slotNow(),
  });
  const cluster = new ClusterClaims(claims);
  const protectedSends = new ProtectedSends(protection, recorder);
  const submitBatch = createBatchSubmitter({ router, recent, claims: cluster, recorder, protectedSends });
  const sendBundle = createBundleSender({ router, claims: cluster, recorder, duplicateTtlMs, simulateFirst: simulateBundles });
  /**
   * Submissions on their way to a route, so that a concurrent duplicate waits for the first:
   * by the first four bytes of the first signature, then the same bytes (HashSlots, not a Map:
   * see runtime/hash-slots.ts).
   */
  const inFlight = new HashSlots<{ bytes: Buffer; result: Promise<Result<Sent>> }>();

  /** A transaction this gateway has not seen: claimed across the cluster (with a shared store), then forwarded. */
  function sendFresh(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<Sent>> {
    return cluster.shared ? claimAndForward(tx, options, context) : forwardFresh(tx, options, context);
  }

  async function claimAndForward(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<Sent>> {
    const id = tx.digest.toString('hex');
    const claimed = await cluster.claim([id]);
    if (!claimed.ok) return claimed;
    if (!claimed.value[0]) {
      recent.remember(tx);
      return ok({ value: tx.signature, outcome: 'duplicate' });
    }
    let result: Result<Sent> | undefined;
    try {
      result = await forwardFresh(tx, options, context);
      return result;
    } finally {
      cluster.settle(result?.ok === true ? [id] : [], result?.ok === true ? [] : [id]);
    }
  }

  async function forwardFresh(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<Sent>> {
    const receivedAt = Date.now();
    const route = router.route('sendTransaction', context.antiMev);
    if (!route.ok) return route;
    if (options.minContextSlot !== undefined) {
      const slot = await router.getSlot();
      if (slot < options.minContextSlot) {
        return fail(slipwayError('MIN_CONTEXT_SLOT_NOT_REACHED', 'Minimum context slot has not been reached', { contextSlot: slot }));
      }
    }
    if (!options.skipPreflight) {
      const simulation = await preflight(router.simulators(route.value), tx);
      if (!simulation.ok) return simulation;
      if (simulation.value.err === 'AlreadyProcessed') return adoptProcessed(tx, context, route.value);
      if (simulation.value.err !== null) return fail(preflightFailure(simulation.value));
    }
    const decision = context.antiMev
      ? await protectedSends.holdUnlessSafe('transaction', context, route.value, [tx], options, receivedAt)
      : undefined;
    if (decision === 'held') {
      recent.remember(tx);
      countTransactions('sendTransaction');
      return ok({ value: tx.signature, outcome: 'accepted' });
    }
    const outcome = await sendToRoute(route.value, tx, decision === undefined ? options : windowOptions(options, decision));
    await recorder.record(
      'transaction',
      context,
      route.value,
      [tx],
      [protectedSends.withEvidence(stateAfter(outcome), outcome, route.value, decision)],
    );
    if (outcome.accepted === 0)
      return fail({
        ...slipwayError('UPSTREAM_UNAVAILABLE', `no upstream took the transaction: ${outcome.failures.join('; ')}`),
        journaled: true,
      });
    recent.remember(tx);
    countTransactions('sendTransaction');
    return ok({ value: tx.signature, outcome: 'accepted' });
  }

  /**
   * The network already has the transaction (a resend whose first answer was lost, perhaps
   * through another gateway that died before answering): nothing is sent again; it is
   * journaled and followed like any other, and answered with its signature.
   */
  async function adoptProcessed(tx: ValidatedTransaction, context: SubmissionContext, route: readonly Upstream[]): Promise<Result<Sent>> {
    await recorder.record('transaction', context, route, [tx], [{ state: 'forwarded' }]);
    recent.remember(tx);
    return ok({ value: tx.signature, outcome: 'duplicate' });
  }

  return {
    async sendTransaction(tx, options, context) {
      if (recent.includes(tx)) return ok({ value: tx.signature, outcome: 'duplicate' });
      const hash = tx.wire.signatures[0]!.readUInt32LE(0);
      const pending = inFlight.find(hash, (entry) => entry.bytes.equals(tx.wire.bytes));
      // The same bytes on their way already: this one is a duplicate of that one, whatever it comes to.
      if (pending !== undefined) return asDuplicate(await pending.result);
      const entry = { bytes: tx.wire.bytes, result: sendFresh(tx, options, received(context)).catch(journalFailure) };
      inFlight.add(hash, entry);
      try {
        return await entry.result;
      } finally {
        inFlight.remove(hash, entry);
      }
    },

    submitBatch: (txs, context) => submitBatch(txs, received(context)).catch(journalFailure),
    sendBundle: (txs, context) => sendBundle(txs, received(context)).catch(journalFailure),

    handedOverWatermark() {
      // Submissions are journaled after their route has them, except held ones, which reach it later.
      return Math.min(recorder.lastSeq, protection.holds.oldestSeq() - 1);
    },
  };
}

const asDuplicate = (result: Result<Sent>): Result<Sent> => (result.ok ? ok({ value: result.value.value, outcome: 'duplicate' }) : result);
