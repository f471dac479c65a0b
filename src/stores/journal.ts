/**
 * The submission journal: every submission Slipway answers with success is written here,
 * durably, before the answer leaves (its `createdAt` is when it was received), with the
 * state its route's first answer gave it; then its lifecycle, transaction by transaction:
 *
 *   forwarded → landed (slot) | failed (error) | expired | rejected (reason)
 *
 * (or `rejected`/`expired` at once, when no upstream took it or the network dropped it).
 * It is what rebroadcast resumes from after a crash, what the status view answers from,
 * and what `bin/slipway submissions` reads.
 */

export type SubmissionKind = 'transaction' | 'batch' | 'bundle';

export type TransactionState = 'forwarded' | 'landed' | 'failed' | 'expired' | 'rejected';

export interface NewSubmission {
  readonly kind: SubmissionKind;
  readonly keyId: string;
  readonly antiMev: boolean;
  /** Set for bundles: the bundle ID. */
  readonly bundleId: string | null;
  /** Names of the upstreams the submission is routed to. */
  readonly routes: readonly string[];
  /** Each transaction with its state after the route's first answer (and why, if not forwarded). */
  readonly transactions: readonly { readonly signature: string; readonly wire: Buffer; readonly state: TransactionState; readonly reason?: string }[];
}

export interface JournalTransaction {
  readonly position: number;
  readonly signature: string;
  readonly wire: Buffer;
  readonly state: TransactionState;
  readonly slot: number | null;
  /** Why it failed, expired or was rejected, in words. */
  readonly reason: string | null;
  /** For `failed`: the transaction error as Solana reports it (JSON). */
  readonly error: unknown;
  readonly attempts: number;
}

export interface JournalEntry {
  readonly seq: number;
  readonly kind: SubmissionKind;
  readonly keyId: string;
  readonly antiMev: boolean;
  readonly bundleId: string | null;
  readonly routes: readonly string[];
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly transactions: readonly JournalTransaction[];
}

/** A change of state of one transaction of a submission. */
export interface StateChange {
  readonly seq: number;
  readonly position: number;
  readonly state: TransactionState;
  readonly slot?: number | null;
  readonly reason?: string | null;
  readonly error?: unknown;
}

export interface JournalQuery {
  readonly keyId?: string;
  readonly state?: TransactionState;
  readonly limit?: number;
}

export interface Journal {
  /** Records a submission durably (it survives kill -9 once this resolves); returns its sequence number. */
  record(submission: NewSubmission): Promise<number>;
  /** Records state changes, all at once. */
  update(changes: readonly StateChange[]): Promise<void>;
  /** Counts one more send of these transactions (rebroadcast). */
  countAttempts(items: readonly { seq: number; position: number }[]): Promise<void>;
  /** Submissions with a sequence number above `seq`, in order (crash recovery of the embedded ledger). */
  after(seq: number): Promise<JournalEntry[]>;
  /** Submissions recorded since `sinceMs` (epoch ms), in order (to rebuild duplicate detection). */
  since(sinceMs: number): Promise<JournalEntry[]>;
  /** Submissions with a transaction not yet in a final state (to resume tracking after a restart). */
  unfinished(): Promise<JournalEntry[]>;
  /** The submissions holding this signature or bundle ID, newest first. */
  find(signatureOrBundleId: string): Promise<JournalEntry[]>;
  /** Newest first. */
  list(query: JournalQuery): Promise<JournalEntry[]>;
  /** The highest sequence number recorded, 0 when empty. */
  lastSeq(): Promise<number>;
  close(): Promise<void>;
}
