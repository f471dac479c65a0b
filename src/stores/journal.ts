/**
 * The submission journal: every submission Slipway answers with success is written here,
 * durably, before the answer leaves. It is what rebroadcast, status tracking and crash
 * recovery read from.
 */

export type SubmissionKind = 'transaction' | 'batch' | 'bundle';

/** Where a journaled transaction stands. */
export type JournalStatus = 'accepted' | 'forwarded' | 'rejected';

export interface JournalTransaction {
  readonly signature: string;
  readonly wire: Buffer;
  /** Set when the route said the transaction will never land (e.g. its blockhash had expired). */
  readonly dropped?: boolean;
}

export interface NewSubmission {
  readonly kind: SubmissionKind;
  readonly keyId: string;
  readonly antiMev: boolean;
  /** Set for bundles: the bundle ID. */
  readonly bundleId: string | null;
  readonly transactions: readonly JournalTransaction[];
}

export interface JournalEntry extends NewSubmission {
  readonly seq: number;
  readonly createdAt: number;
  readonly status: JournalStatus;
}

export interface Journal {
  /** Records a submission durably (it survives kill -9 once this resolves); returns its sequence number. */
  record(submission: NewSubmission): Promise<number>;
  /** Records what became of a submission after it was handed to the router. */
  setStatus(seq: number, status: JournalStatus, detail?: string): Promise<void>;
  /** Records that one transaction of a submission was dropped by its route and will never land. */
  markDropped(seq: number, position: number, reason: string): Promise<void>;
  /** Submissions with a sequence number above `seq`, in order (for crash recovery). */
  after(seq: number): Promise<JournalEntry[]>;
  /** Submissions recorded since `sinceMs` (epoch ms), in order (to rebuild duplicate detection). */
  since(sinceMs: number): Promise<JournalEntry[]>;
  close(): Promise<void>;
}
