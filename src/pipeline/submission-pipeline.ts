/**
 * The submission pipeline: takes transactions that passed the edge checks and sees them
 * to their route. Its order is the product's promise: duplicate check, preflight (unless
 * skipped), journal (durable: from here on nothing is lost), the route's upstreams, then
 * the tracker, which follows each transaction until it lands or expires.
 *
 * A protected (`anti_mev=1`) transaction or batch goes to its route only in a safe window
 * (protection/safe-window.ts); otherwise it is journaled `held`, answered, and sent by the
 * hold queue when a window opens. Each of its sends is journaled with its evidence.
 */
import type { Result, SlipwayError } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import { preflightFailure } from '../errors/preflight-failure';
import type { DuplicateClaims } from '../stores/duplicate-claims';
import { countTransactions, protectedHeldTotal } from '../metrics/metrics';
import type { HoldQueue } from './hold-queue';
import type { SafeWindow, SendDecision } from '../protection/safe-window';
import type { Journal, NewSubmission, SendEvidence, SubmissionKind } from '../stores/journal';
import type { BundleSendResult, SendOptions, SimulationResult, Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { computeBundleId } from '../core/bundle-id';
import type { RecentTransactions } from './recent-transactions';
import { sendToRoute, stateAfter, type JournalState } from './route-send';
import type { Router } from './router';
import type { SubmissionTracker } from './submission-tracker';
import { TtlMap } from './ttl-map';

export interface SubmissionContext {
  readonly keyId: string;
  readonly antiMev: boolean;
}

export interface BundleReceipt {
  readonly bundleId: string;
  readonly signatures: string[];
}

export interface SubmissionPipeline {
  sendTransaction(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<Accepted<string>>>;
  submitBatch(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<Accepted<string[]>>>;
  sendBundle(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<Accepted<BundleReceipt>>>;
  /**
   * The journal sequence number up to which every submission has been handed to its route:
   * a ledger snapshot taken now contains all of them, so recovery replays only what follows.
   */
  handedOverWatermark(): number;
}

/**
 * What a submission came to: its answer, and whether it had been submitted already (so
 * nothing was sent again: a resubmission, a claim another gateway holds, or what the
 * network has processed). The caller counts and logs it (http/submission-desk.ts).
 */
export interface Accepted<T> {
  readonly value: T;
  readonly duplicate: boolean;
}

type Sent = Accepted<string>;

/** Landed bundles remembered for resubmissions (about 600 bytes each with five signatures). */
const MAX_LANDED_BUNDLES = 100_000;

/** Batch members skip preflight: each is executed on its own and may fail on chain alone. */
const BATCH_SEND_OPTIONS: SendOptions = {
  skipPreflight: true,
  preflightCommitment: 'processed',
  maxRetries: undefined,
  minContextSlot: undefined,
};

export interface PipelineDependencies {
  readonly router: Router;
  readonly journal: Journal;
  readonly recent: RecentTransactions;
  readonly tracker: SubmissionTracker;
  /** How long a landed bundle's ID is remembered, so that resending it is answered, not re-executed. */
  readonly duplicateTtlMs: number;
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
  initialSeq,
  protection,
  claims,
}: PipelineDependencies): SubmissionPipeline {
  /** Claims ids across the cluster: per id, true to go ahead, false for a duplicate already submitted through another gateway. */
  async function claim(ids: string[]): Promise<Result<boolean[]>> {
    if (claims === undefined) return ok(ids.map(() => true));
    try {
      return ok((await claims.claim(ids)).map((outcome) => outcome !== 'duplicate'));
    } catch (error) {
      return fail(
        slipwayError(
          'STORE_UNAVAILABLE',
          `duplicate detection cannot reach its store (${(error as Error).message}); nothing was submitted, try again`,
          { retryAfterMs: 1000 },
        ),
      );
    }
  }

  /** Keeps the claims of what went out and gives back the others; not awaited (a failure only makes another gateway wait for the claim to expire). */
  function settle(keep: readonly string[], giveBack: readonly string[]): void {
    if (claims === undefined) return;
    if (keep.length > 0) claims.confirm(keep).catch(() => {});
    if (giveBack.length > 0) claims.release(giveBack).catch(() => {});
  }
  const landedBundles = new TtlMap<string, BundleReceipt>(duplicateTtlMs, MAX_LANDED_BUNDLES);
  /** Submissions on their way to a route, so that a concurrent duplicate waits for the first. */
  const inFlight = new Map<string, { bytes: Buffer; result: Promise<Result<Sent>> }>();
  let lastSeq = initialSeq;

  /** Journals a submission whose route has answered (each transaction with its state), then tracks what is on its way. */
  async function journalize(
    kind: SubmissionKind,
    context: SubmissionContext,
    route: readonly Upstream[],
    txs: readonly ValidatedTransaction[],
    states: readonly JournalState[],
    bundleId: string | null = null,
  ): Promise<number> {
    const submission: NewSubmission = {
      kind,
      keyId: context.keyId,
      antiMev: context.antiMev,
      bundleId,
      routes: route.map((u) => u.name),
      transactions: txs.map((tx, position) => ({ signature: tx.signature, wire: tx.wire.bytes, ...states[position]! })),
    };
    let seq: number;
    try {
      seq = await journal.record(submission);
    } catch (error) {
      throw new JournalUnavailable(error);
    }
    lastSeq = Math.max(lastSeq, seq);
    if (route.some((u) => u.tracked)) {
      // Journaled within milliseconds of the request: close enough for a landing time.
      const submittedAt = Date.now();
      submission.transactions.forEach((entry, position) => {
        if (entry.state === 'forwarded' && submission.kind !== 'bundle')
          tracker.track({ seq, position, tx: txs[position]!, upstreams: route, attempts: 0, submittedAt, protected: context.antiMev });
      });
      if (submission.kind === 'bundle' && submission.transactions[0]?.state === 'forwarded') {
        tracker.trackBundle({ seq, bundleId: submission.bundleId!, size: txs.length, upstreams: route, polls: 0, submittedAt });
      }
    }
    return seq;
  }

  /** A transaction this gateway has not seen: claimed across the cluster (with a shared store), then forwarded. */
  async function sendFresh(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<Sent>> {
    if (claims === undefined) return forwardFresh(tx, options, context);
    const id = tx.digest.toString('hex');
    const claimed = await claim([id]);
    if (!claimed.ok) return claimed;
    if (!claimed.value[0]) {
      recent.remember(tx);
      return ok({ value: tx.signature, duplicate: true });
    }
    let result: Result<Sent> | undefined;
    try {
      result = await forwardFresh(tx, options, context);
      return result;
    } finally {
      settle(result?.ok === true ? [id] : [], result?.ok === true ? [] : [id]);
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
    const decision = context.antiMev ? await holdUnlessSafe('transaction', context, route.value, [tx], options, receivedAt) : undefined;
    if (decision === 'held') {
      recent.remember(tx);
      countTransactions('sendTransaction');
      return ok({ value: tx.signature, duplicate: false });
    }
    const outcome = await sendToRoute(route.value, tx, options);
    await journalize(
      'transaction',
      context,
      route.value,
      [tx],
      [withEvidence(stateAfter(outcome), outcome.accepted, route.value, decision)],
    );
    if (outcome.accepted === 0)
      return fail(slipwayError('UPSTREAM_UNAVAILABLE', `no upstream took the transaction: ${outcome.failures.join('; ')}`));
    recent.remember(tx);
    countTransactions('sendTransaction');
    return ok({ value: tx.signature, duplicate: false });
  }

  /**
   * The network already has the transaction (a resend whose first answer was lost, perhaps
   * through another gateway that died before answering): nothing is sent again; it is
   * journaled and followed like any other, and answered with its signature.
   */
  async function adoptProcessed(tx: ValidatedTransaction, context: SubmissionContext, route: readonly Upstream[]): Promise<Result<Sent>> {
    await journalize('transaction', context, route, [tx], [{ state: 'forwarded' }]);
    recent.remember(tx);
    return ok({ value: tx.signature, duplicate: true });
  }

  /** A protected transaction's state with the evidence of its first send, made at once (not held), when it was sent. */
  function withEvidence(
    state: JournalState,
    accepted: number,
    route: readonly Upstream[],
    decision: SendDecision | undefined,
  ): JournalState & { send?: SendEvidence } {
    if (decision === undefined || accepted === 0) return state;
    return {
      ...state,
      send: protection.window.evidence(
        decision,
        route.map((u) => u.name),
        0,
        0,
        null,
      ),
    };
  }

  /**
   * For a protected submission: when no safe window is open, journals its transactions as
   * `held` (with the reason) and hands them to the hold queue. Otherwise returns the decision
   * to send now, for the evidence.
   */
  async function holdUnlessSafe(
    kind: 'transaction' | 'batch',
    context: SubmissionContext,
    route: readonly Upstream[],
    txs: readonly ValidatedTransaction[],
    options: SendOptions,
    receivedAt: number,
  ): Promise<SendDecision | 'held'> {
    const decision = protection.window.decide();
    if (decision.send) return decision;
    const seq = await journalize(
      kind,
      context,
      route,
      txs,
      txs.map(() => ({ state: 'held' as const, reason: decision.reason })),
    );
    protection.holds.hold(
      txs.map((tx, position) => ({ seq, position, tx, upstreams: route, options, heldSince: receivedAt, reason: decision.reason })),
    );
    protectedHeldTotal.inc(txs.length);
    return 'held';
  }

  async function submitBatch(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<Accepted<string[]>>> {
    const route = router.route('submitBatch', context.antiMev);
    if (!route.ok) return route;
    let fresh = txs.filter((tx) => !recent.includes(tx));
    let ids: string[] = [];
    if (claims !== undefined && fresh.length > 0) {
      const claimed = await claim(fresh.map((tx) => tx.digest.toString('hex')));
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
        ? await holdUnlessSafe('batch', context, route.value, fresh, BATCH_SEND_OPTIONS, receivedAt)
        : undefined;
    if (decision === 'held') {
      settle(ids, []);
      fresh.forEach((tx) => recent.remember(tx));
      countTransactions('submitBatch', fresh.length);
    } else if (fresh.length > 0) {
      // Independent members: one that fails (on chain or on the way) leaves the others unaffected.
      const outcomes = await Promise.all(fresh.map((tx) => sendToRoute(route.value, tx, BATCH_SEND_OPTIONS)));
      await journalize(
        'batch',
        context,
        route.value,
        fresh,
        outcomes.map((o) => withEvidence(stateAfter(o), o.accepted, route.value, decision)),
      );
      const went = outcomes.map((o) => o.accepted > 0);
      settle(
        ids.filter((_, i) => went[i]),
        ids.filter((_, i) => !went[i]),
      );
      if (!went.some(Boolean)) {
        return fail(slipwayError('UPSTREAM_UNAVAILABLE', `no upstream took the batch: ${outcomes[0]!.failures.join('; ')}`));
      }
      fresh.forEach((tx, position) => {
        if (went[position]) recent.remember(tx);
      });
      countTransactions('submitBatch', fresh.length);
    }
    return ok({ value: txs.map((tx) => tx.signature), duplicate: fresh.length === 0 });
  }

  async function sendBundle(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<Accepted<BundleReceipt>>> {
    const signatures = txs.map((tx) => tx.signature);
    const bundleId = computeBundleId(signatures);
    const landed = landedBundles.get(bundleId);
    if (landed !== undefined) return ok({ value: landed, duplicate: true });
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
    const claimId = `bundle:${bundleId}`;
    const claimed = await claim([claimId]);
    if (!claimed.ok) return claimed;
    if (!claimed.value[0]) return ok({ value: { bundleId, signatures }, duplicate: true });
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
        : { state: 'rejected' as const, reason: rejection !== undefined ? error.message : `no upstream took it: ${failures}` };
    await journalize(
      'bundle',
      context,
      route.value,
      txs,
      txs.map(() => state),
      bundleId,
    );
    settle(error === undefined ? [claimId] : [], error === undefined ? [] : [claimId]);
    if (error !== undefined) return fail(error);
    // Members are not remembered as sent alone: a block engine may still reject the bundle
    // (its statuses say so later), and each member must then be free to go again. A member
    // sent alone meanwhile is forwarded, and the network executes it at most once.
    const receipt = { bundleId, signatures };
    landedBundles.set(bundleId, receipt);
    countTransactions('sendBundle', txs.length);
    return ok({ value: receipt, duplicate: false });
  }

  return {
    async sendTransaction(tx, options, context) {
      if (recent.includes(tx)) return ok({ value: tx.signature, duplicate: true });
      const key = tx.wire.signatures[0]!.toString('latin1');
      const pending = inFlight.get(key);
      // The same bytes on their way already: this one is a duplicate of that one, whatever it comes to.
      if (pending !== undefined && pending.bytes.equals(tx.wire.bytes)) return asDuplicate(await pending.result);
      const result = sendFresh(tx, options, context).catch(journalFailure);
      inFlight.set(key, { bytes: tx.wire.bytes, result });
      try {
        return await result;
      } finally {
        inFlight.delete(key);
      }
    },

    submitBatch: (txs, context) => submitBatch(txs, context).catch(journalFailure),
    sendBundle: (txs, context) => sendBundle(txs, context).catch(journalFailure),

    handedOverWatermark() {
      // Submissions are journaled after their route has them, except held ones, which reach it later.
      return Math.min(lastSeq, protection.holds.oldestSeq() - 1);
    },
  };
}

const asDuplicate = (result: Result<Sent>): Result<Sent> => (result.ok ? ok({ value: result.value.value, duplicate: true }) : result);

/** The journal could not record a submission its route had already taken. */
class JournalUnavailable extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** A submission the journal could not record is answered as unavailable, not as an internal error: the client may try again. */
function journalFailure(error: unknown): Result<never> {
  if (!(error instanceof JournalUnavailable)) throw error;
  return fail(
    slipwayError(
      'STORE_UNAVAILABLE',
      `the journal could not record the submission (${error.message}); it may have been forwarded: check its status (getSignatureStatuses) before sending it again, or send it again as is (duplicates are not executed twice)`,
      { retryAfterMs: 1000 },
    ),
  );
}

/** Simulates on the first upstream that can, failing over to the next. */
async function preflight(simulators: readonly Upstream[], tx: ValidatedTransaction): Promise<Result<SimulationResult>> {
  const failures: string[] = [];
  for (const simulator of simulators) {
    try {
      return ok(await simulator.simulate(tx));
    } catch (error) {
      failures.push(`${simulator.name}: ${(error as Error).message}`);
    }
  }
  return fail(slipwayError('UPSTREAM_UNAVAILABLE', `the preflight simulation could not run: ${failures.join('; ')}`));
}

function bundleRejection(
  bundleId: string,
  signatures: string[],
  outcome: { failedIndex: number; err: unknown; errText: string; logs: string[] },
): SlipwayError {
  if (outcome.failedIndex < 0) {
    return slipwayError('BUNDLE_REJECTED', `Bundle rejected: ${outcome.errText}; none of the bundle's transactions was processed`, {
      bundleId,
    });
  }
  const position = outcome.failedIndex + 1;
  return slipwayError(
    'BUNDLE_REJECTED',
    `Bundle rejected: transaction ${position} of ${signatures.length} (${signatures[outcome.failedIndex]}) failed: ${outcome.errText}; none of the bundle's transactions was processed`,
    { bundleId, failedTransactionIndex: outcome.failedIndex, err: outcome.err, logs: outcome.logs },
  );
}
