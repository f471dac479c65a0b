/**
 * The submission journal: every submission Slipway answers with success is written here,
 * durably, before the answer leaves (its `createdAt` is when it was received), with the
 * state its route's first answer gave it; then its lifecycle, transaction by transaction:
 *
 *   forwarded → landed (slot) | failed (error) | expired | rejected (reason)
 *
 * (or `rejected`/`expired` at once, when no upstream took it or the network dropped it).
 * A protected (`anti_mev=1`) transaction may first be `held`, until a safe window opens
 * (→ forwarded) or its blockhash expires (→ expired); each of its sends is recorded with
 * the evidence of where and when it went (`SendEvidence`).
 * It is what rebroadcast resumes from after a crash, what the status view answers from,
 * and what `bin/slipway submissions` reads.
 */

export type SubmissionKind = 'transaction' | 'batch' | 'bundle';

export { TRANSACTION_STATES, type TransactionState } from '../../core/transaction-states';
import type { OutcomeReason } from '../../core/outcome-reasons';
import type { TransactionState } from '../../core/transaction-states';

/** What a protected transaction's send looked like: which window it went in, by which route, after how long a hold, and why. */
export interface SendEvidence {
  /** When it was sent (epoch ms). */
  readonly at: number;
  /** 0: the first send; n: the n-th rebroadcast. */
  readonly attempt: number;
  /** The upstreams it was handed to. */
  readonly route: readonly string[];
  /** 'policy': every leader of the window was trusted by the validator policy; 'none': no policy is configured, so no leader gating applied. */
  readonly gating: 'policy' | 'none';
  /** The slot it was sent in (null when the leader schedule was not known, without a policy). */
  readonly slot: number | null;
  /** The slots of the safe window, from `slot` on. */
  readonly windowSlots: number;
  /** The distinct leaders of that window, in order. */
  readonly leaders: readonly string[];
  /** How long it waited for this window: since it was received (first send) or since its rebroadcast was due. */
  readonly heldMs: number;
  /** Why it waited (the last reason), or null when it did not. */
  readonly heldReason: string | null;
  /** Routes that pick leaders (the TPU): each leader it was handed to, with its address and upstream (first sends, releases from hold and rebroadcasts). */
  readonly contacted?: readonly { readonly upstream: string; readonly leader: string; readonly address: string }[];
}

/**
 * Why a transaction did not land (or landed and failed), or is held, as it is written: a code
 * of core/outcome-reasons.ts for clients to branch on and the words for people, together or
 * not at all.
 */
export type WrittenReason =
  { readonly reasonCode: OutcomeReason; readonly reason: string } | { readonly reasonCode?: undefined; readonly reason?: undefined };

/** A transaction as recorded: its state after the route's first answer, and why, if not forwarded. */
export type NewTransaction = {
  readonly signature: string;
  readonly wire: Buffer;
  readonly state: TransactionState;
  /** A protected transaction's first send, when it was sent before the answer. */
  readonly send?: SendEvidence;
} & WrittenReason;

export interface NewSubmission {
  readonly kind: SubmissionKind;
  readonly keyId: string;
  readonly antiMev: boolean;
  /** Set for bundles: the bundle ID. */
  readonly bundleId: string | null;
  /** Names of the upstreams the submission is routed to. */
  readonly routes: readonly string[];
  readonly transactions: readonly NewTransaction[];
}

export interface JournalTransaction {
  readonly position: number;
  readonly signature: string;
  readonly wire: Buffer;
  readonly state: TransactionState;
  readonly slot: number | null;
  /** Why it failed, expired, was rejected or is held, in words. */
  readonly reason: string | null;
  /** The same as a code of core/outcome-reasons.ts. */
  readonly reasonCode: OutcomeReason | null;
  /** For `failed`: the transaction error as Solana reports it (JSON). */
  readonly error: unknown;
  readonly attempts: number;
  /** Landed or failed: when it landed (epoch ms, the tracker's estimate from its slot), or null when not known. */
  readonly landedAt: number | null;
  /** Landed or failed: its slot minus the slot the gateway saw when it was received, or null when not known (e.g. received before a restart). */
  readonly slotsToLand: number | null;
  /** A protected transaction's sends, in order (empty for unprotected ones). */
  readonly sends: readonly SendEvidence[];
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
export type StateChange = { readonly seq: number; readonly position: number } & TransactionChange;

/**
 * What changes: the state, and what came with it. Its reason: absent, the reason stays as it
 * was; null (code and words), it is cleared (a held transaction sent); given, it replaces it.
 */
export type TransactionChange = {
  readonly state: TransactionState;
  readonly slot?: number | null;
  readonly error?: unknown;
  /** The transaction's signature (or its bundle's ID), for the log line of a transaction that ended; not stored. */
  readonly id?: string;
  /** On landing (landed or failed): when (epoch ms, estimated from the slot), and how many slots after the one seen at receipt. */
  readonly landedAt?: number | null;
  readonly slotsToLand?: number | null;
} & (WrittenReason | { readonly reasonCode: null; readonly reason: null });

/** One send of one transaction of a submission. */
export interface SendRecord {
  readonly seq: number;
  readonly position: number;
  readonly send: SendEvidence;
}

export interface JournalQuery {
  readonly keyId?: string;
  readonly state?: TransactionState;
  readonly limit?: number;
}

export interface LandingQuery {
  /** Submissions received at or after this time (epoch ms). */
  readonly sinceMs: number;
  readonly keyId?: string;
}

/**
 * Transactions alike in everything the landing report reads (kind, key, route, state and
 * times to land), counted by the journal's own query: a report reads a few thousand groups,
 * not a row per transaction. A bundle's members land together with the same times, so each
 * bundle is in one group, and `submissions` adds up across groups.
 */
export interface LandingGroup {
  readonly kind: SubmissionKind;
  readonly keyId: string;
  /** Route names joined by `+` (as the landing metric labels them). */
  readonly route: string;
  readonly state: TransactionState;
  /** Landed or failed, when known: from receipt to landing. */
  readonly msToLand: number | null;
  readonly slotsToLand: number | null;
  /** How many transactions, and of how many submissions. */
  readonly transactions: number;
  readonly submissions: number;
}

/** What the landing advice reads: the transactions of recent submissions, newest first. */
export interface OutcomeQuery {
  /** Submissions received at or after this time (epoch ms). */
  readonly sinceMs: number;
  /** At most this many transactions. */
  readonly limit: number;
}

/** One transaction of a recent submission with what it paid (its wire) and how it ended so far. */
export interface TransactionOutcome {
  readonly seq: number;
  readonly position: number;
  readonly kind: SubmissionKind;
  readonly keyId: string;
  /** Route names joined by `+`, as the landing report names them. */
  readonly route: string;
  readonly createdAt: number;
  readonly signature: string;
  readonly wire: Buffer;
  readonly state: TransactionState;
  readonly slot: number | null;
  readonly slotsToLand: number | null;
}

export interface Journal {
  /** Records a submission durably (it survives kill -9 once this resolves); returns its sequence number. */
  record(submission: NewSubmission): Promise<number>;
  /** Records state changes, all at once. */
  update(changes: readonly StateChange[]): Promise<void>;
  /** Records sends of protected transactions (released from a hold, or rebroadcast), with their evidence. */
  recordSends(items: readonly SendRecord[]): Promise<void>;
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
  /** The transactions of the submissions received since `sinceMs` (of one key, if given), counted in groups: what the landing report reads. */
  landingGroups(query: LandingQuery): Promise<LandingGroup[]>;
  /** The transactions of the submissions received since `sinceMs`, newest first, at most `limit`: what the landing advice learns from. */
  outcomes(query: OutcomeQuery): Promise<TransactionOutcome[]>;
  /** Shared journals only: which gateway follows each unfinished submission. */
  readonly leases?: SubmissionLeases;
  close(): Promise<void>;
}

/**
 * Rebroadcast ownership in a cluster: each unfinished submission is followed (tracked,
 * rebroadcast, released from a hold) by exactly one gateway at a time, the holder of its
 * lease. A gateway holds the leases of what it records and renews them; when it stops,
 * they run out and another gateway takes the submissions over.
 */
export interface SubmissionLeases {
  /** Extends this gateway's leases; of `following` (the sequence numbers it follows), returns those now held by another gateway. */
  renew(following: readonly number[]): Promise<number[]>;
  /** Takes up to `limit` unfinished submissions whose lease ran out: they are this gateway's now. */
  takeOver(limit: number): Promise<JournalEntry[]>;
}
