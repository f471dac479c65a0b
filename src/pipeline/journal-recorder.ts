/**
 * Journals a submission once its route has answered (each transaction with its state), then
 * hands what is on its way to the tracker. Keeps the highest sequence number recorded, for
 * the ledger's snapshots. A journal that cannot record is answered as unavailable.
 */
import { fail, slipwayError, type Result } from '../errors/error-catalogue';
import type { Journal, NewSubmission, SubmissionKind } from '../stores/journal';
import type { Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { bundleTipLamports } from './landed-tips';
import type { JournalState } from './route-send';
import type { SubmissionContext } from './submission-shapes';
import type { LandingTracker } from './landing-tracker';

export class JournalRecorder {
  /** The highest sequence number recorded so far. */
  lastSeq: number;

  constructor(
    private readonly journal: Journal,
    private readonly tracker: LandingTracker,
    initialSeq: number,
  ) {
    this.lastSeq = initialSeq;
  }

  /** Records the submission durably, then tracks what went out; throws JournalUnavailable when the journal cannot. */
  async record(
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
      seq = await this.journal.record(submission);
    } catch (error) {
      throw new JournalUnavailable(error);
    }
    this.lastSeq = Math.max(this.lastSeq, seq);
    if (route.some((u) => u.tracked)) {
      // Journaled within milliseconds of the request: close enough for a landing time.
      const submittedAt = Date.now();
      const receivedSlot = context.receivedSlot ?? null;
      submission.transactions.forEach((entry, position) => {
        if (entry.state === 'forwarded' && submission.kind !== 'bundle')
          this.tracker.track({
            seq,
            position,
            tx: txs[position]!,
            upstreams: route,
            attempts: 0,
            submittedAt,
            receivedSlot,
            protected: context.antiMev,
          });
      });
      if (submission.kind === 'bundle' && submission.transactions[0]?.state === 'forwarded') {
        this.tracker.trackBundle({
          seq,
          bundleId: submission.bundleId!,
          size: txs.length,
          upstreams: route,
          polls: 0,
          submittedAt,
          receivedSlot,
          tipLamports: bundleTipLamports(txs),
        });
      }
    }
    return seq;
  }
}

/** The journal could not record a submission its route had already taken. */
export class JournalUnavailable extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** A submission the journal could not record is answered as unavailable, not as an internal error: the client may try again. */
export function journalFailure(error: unknown): Result<never> {
  if (!(error instanceof JournalUnavailable)) throw error;
  return fail(
    slipwayError(
      'STORE_UNAVAILABLE',
      `the journal could not record the submission (${error.message}); it may have been forwarded: check its status (getSignatureStatuses) before sending it again, or send it again as is (duplicates are not executed twice)`,
      { retryAfterMs: 1000 },
    ),
  );
}
