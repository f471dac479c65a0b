/**
 * The shapes the submission pipeline takes and gives: who a submission is for, its answer,
 * and the pipeline's face. Apart from submission-pipeline.ts so that the files it composes
 * (journal-recorder, protected-sends, send-bundle, submit-batch) take these from here and
 * not from the file that imports them.
 */
import type { Result } from '../errors/error-catalogue';
import type { SendOptions } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';

export interface SubmissionContext {
  readonly keyId: string;
  readonly antiMev: boolean;
  /** The slot the gateway saw when the request came (stamped here, from the slot watch): for the slots it took to land. */
  readonly receivedSlot?: number | null;
}

export interface BundleReceipt {
  readonly bundleId: string;
  readonly signatures: string[];
}

export interface SubmissionPipeline {
  sendTransaction(tx: ValidatedTransaction, options: SendOptions, context: SubmissionContext): Promise<Result<Submitted<string>>>;
  submitBatch(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<Submitted<string[]>>>;
  sendBundle(txs: readonly ValidatedTransaction[], context: SubmissionContext): Promise<Result<Submitted<BundleReceipt>>>;
  /**
   * The journal sequence number up to which every submission has been handed to its route:
   * a ledger snapshot taken now contains all of them, so recovery replays only what follows.
   */
  handedOverWatermark(): number;
}

/**
 * A submission taken, and how: `accepted` (sent now), `duplicate` (submitted already, so
 * nothing was sent again: a resubmission, a claim another gateway holds, or what the network
 * has processed), or `replayed` (the first answer to its Idempotency-Key, given again:
 * http/idempotency.ts). The one shape of a submission's answer from the pipeline to the
 * JSON-RPC handler, which writes `value` as the result; the service (http/submission-service.ts)
 * counts and logs the outcome.
 */
export interface Submitted<T> {
  readonly value: T;
  readonly outcome: 'accepted' | 'duplicate' | 'replayed';
}
