/**
 * The submission pipeline: takes transactions that passed the edge checks and sees them
 * to a route. Its order is the product's promise: duplicate check, preflight (unless
 * skipped), journal (durable: from here on nothing is lost), then the router.
 */
import type { Result, SlipwayError } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import { preflightFailure } from '../errors/preflight-failure';
import { submissionsTotal, transactionsTotal } from '../metrics/metrics';
import type { Journal, NewSubmission } from '../stores/journal';
import type { SendOptions } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { computeBundleId } from './bundle-id';
import type { RecentTransactions } from './recent-transactions';
import type { Router } from './router';
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
  sendTransaction(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<string>>;
  submitBatch(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<string[]>>;
  sendBundle(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<BundleReceipt>>;
  /**
   * The journal sequence number up to which every submission has been handed to its route:
   * a ledger snapshot taken now contains all of them, so recovery replays only what follows.
   */
  handedOverWatermark(): number;
}

/** Batch members skip preflight: each is executed on its own and may fail on chain alone. */
const BATCH_SEND_OPTIONS: SendOptions = { skipPreflight: true, preflightCommitment: 'processed', maxRetries: undefined, minContextSlot: undefined };

export interface PipelineDependencies {
  readonly router: Router;
  readonly journal: Journal;
  readonly recent: RecentTransactions;
  /** How long a landed bundle's ID is remembered, so that resending it is answered, not re-executed. */
  readonly duplicateTtlMs: number;
  /** The journal's last sequence number when the pipeline starts. */
  readonly initialSeq: number;
}

export function createSubmissionPipeline({ router, journal, recent, duplicateTtlMs, initialSeq }: PipelineDependencies): SubmissionPipeline {
  const landedBundles = new TtlMap<string, BundleReceipt>(duplicateTtlMs);
  /** Submissions on their way to a route, so that a concurrent duplicate waits for the first. */
  const inFlight = new Map<string, { bytes: Buffer; result: Promise<Result<string>> }>();
  const unfinishedSeqs = new Set<number>();
  let lastSeq = initialSeq;

  async function journalize(submission: NewSubmission): Promise<number> {
    const seq = await journal.record(submission);
    lastSeq = Math.max(lastSeq, seq);
    unfinishedSeqs.add(seq);
    return seq;
  }

  async function sendFresh(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<string>> {
    const route = router.pick(context.antiMev);
    if (!route.ok) return route;
    const upstream = route.value;
    if (options.minContextSlot !== undefined) {
      const slot = await upstream.getSlot();
      if (slot < options.minContextSlot) {
        return fail(slipwayError('MIN_CONTEXT_SLOT_NOT_REACHED', 'Minimum context slot has not been reached', { contextSlot: slot }));
      }
    }
    if (!options.skipPreflight) {
      const simulation = await upstream.simulate(tx);
      if (simulation.err !== null) return fail(preflightFailure(simulation));
    }
    const seq = await journalize({ kind: 'transaction', keyId: context.keyId, antiMev: context.antiMev, bundleId: null, transactions: [journalTransaction(tx)] });
    try {
      const outcome = await upstream.sendTransaction(tx, options);
      if (outcome.dropped !== null) await journal.markDropped(seq, 0, outcome.dropped);
    } finally {
      unfinishedSeqs.delete(seq);
    }
    recent.remember(tx);
    transactionsTotal.inc({ operation: 'sendTransaction' });
    return ok(tx.signature);
  }

  return {
    async sendTransaction(tx, options, context) {
      if (recent.includes(tx)) {
        submissionsTotal.inc({ operation: 'sendTransaction', outcome: 'duplicate' });
        return ok(tx.signature);
      }
      const key = tx.wire.signatures[0]!.toString('latin1');
      const pending = inFlight.get(key);
      if (pending !== undefined && pending.bytes.equals(tx.wire.bytes)) return pending.result;
      const result = sendFresh(tx, options, context);
      inFlight.set(key, { bytes: tx.wire.bytes, result });
      try {
        const settled = await result;
        submissionsTotal.inc({ operation: 'sendTransaction', outcome: settled.ok ? 'accepted' : 'refused' });
        return settled;
      } finally {
        inFlight.delete(key);
      }
    },

    async submitBatch(txs, context) {
      const route = router.pick(context.antiMev);
      if (!route.ok) return route;
      const fresh = txs.filter((tx) => !recent.includes(tx));
      if (fresh.length > 0) {
        const seq = await journalize({ kind: 'batch', keyId: context.keyId, antiMev: context.antiMev, bundleId: null, transactions: fresh.map(journalTransaction) });
        try {
          // Independent members: one that fails (on chain or on the way) leaves the others unaffected.
          await Promise.all(
            fresh.map(async (tx, position) => {
              const outcome = await route.value.sendTransaction(tx, BATCH_SEND_OPTIONS);
              if (outcome.dropped !== null) await journal.markDropped(seq, position, outcome.dropped);
            }),
          );
        } finally {
          unfinishedSeqs.delete(seq);
        }
        fresh.forEach((tx) => recent.remember(tx));
        transactionsTotal.inc({ operation: 'submitBatch' }, fresh.length);
      }
      submissionsTotal.inc({ operation: 'submitBatch', outcome: fresh.length > 0 ? 'accepted' : 'duplicate' });
      return ok(txs.map((tx) => tx.signature));
    },

    async sendBundle(txs, context) {
      const signatures = txs.map((tx) => tx.signature);
      const bundleId = computeBundleId(signatures);
      const landed = landedBundles.get(bundleId);
      if (landed !== undefined) {
        submissionsTotal.inc({ operation: 'sendBundle', outcome: 'duplicate' });
        return ok(landed);
      }
      const route = router.pick(false);
      if (!route.ok) return route;
      const seq = await journalize({ kind: 'bundle', keyId: context.keyId, antiMev: context.antiMev, bundleId, transactions: txs.map(journalTransaction) });
      let outcome;
      try {
        outcome = await route.value.sendBundle(bundleId, txs);
      } finally {
        unfinishedSeqs.delete(seq);
      }
      if (!outcome.accepted) {
        await journal.setStatus(seq, 'rejected', outcome.errText);
        submissionsTotal.inc({ operation: 'sendBundle', outcome: 'rejected' });
        return fail(bundleRejection(bundleId, signatures, outcome));
      }
      txs.forEach((tx) => recent.remember(tx));
      const receipt = { bundleId, signatures };
      landedBundles.set(bundleId, receipt);
      transactionsTotal.inc({ operation: 'sendBundle' }, txs.length);
      submissionsTotal.inc({ operation: 'sendBundle', outcome: 'accepted' });
      return ok(receipt);
    },

    handedOverWatermark() {
      let watermark = lastSeq;
      for (const seq of unfinishedSeqs) watermark = Math.min(watermark, seq - 1);
      return watermark;
    },
  };
}

function journalTransaction(tx: ValidatedTransaction) {
  return { signature: tx.signature, wire: tx.wire.bytes };
}

function bundleRejection(
  bundleId: string,
  signatures: string[],
  outcome: { failedIndex: number; err: unknown; errText: string; logs: string[] },
): SlipwayError {
  const position = outcome.failedIndex + 1;
  return slipwayError(
    'BUNDLE_REJECTED',
    `Bundle rejected: transaction ${position} of ${signatures.length} (${signatures[outcome.failedIndex]}) failed: ${outcome.errText}; none of the bundle's transactions was processed`,
    { bundleId, failedTransactionIndex: outcome.failedIndex, err: outcome.err, logs: outcome.logs },
  );
}
