/**
 * Refused submissions, counted: refusals are never journaled (a flood of garbage must not
 * fill the disk), but how many each key had, by operation and reason, is kept for the
 * landing report, per minute, in the data dir's SQLite or in PostgreSQL beside the journal
 * (so that it covers every gateway of a cluster and survives restarts).
 *
 * Counts arrive already summed (reports/refusal-count-buffer.ts adds them up in memory and writes once a
 * second), so a store sees a handful of rows a second however many refusals there are.
 */
import type { OutcomeReason } from '../core/outcome-reasons';

/** The operations a refusal can be of: JSON-RPC's sendTransaction and sendBundle, and POST /submit-batch. */
import type { SubmissionOperation } from '../core/landing-report';

/** An operation whose refusals are counted. */
export type RefusedOperation = SubmissionOperation;

/** Refused transactions of one key, operation and reason in one minute. */
export interface RefusalCount {
  readonly keyId: string;
  readonly operation: RefusedOperation;
  readonly reasonCode: OutcomeReason;
  /** The minute's start (epoch ms, a multiple of 60,000). */
  readonly minute: number;
  readonly count: number;
}

export interface RefusalCounts {
  /** Adds these counts to what is stored (one transaction). */
  add(counts: readonly RefusalCount[]): Promise<void>;
  /** The counts of the minutes from the one holding `sinceMs` on (of one key, if given), summed over minutes. */
  totals(query: { readonly sinceMs: number; readonly keyId?: string }): Promise<Omit<RefusalCount, 'minute'>[]>;
  close(): Promise<void>;
}

export const MINUTE_MS = 60_000;

/** The start of the minute holding `at`. */
export const minuteOf = (at: number): number => Math.floor(at / MINUTE_MS) * MINUTE_MS;
