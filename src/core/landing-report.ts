/**
 * The landing report's shape (`getLandingReport`, `bin/slipway report`, the dashboard): what a
 * client receives, shared by the report's arithmetic (reports/landing-statistics.ts) and the
 * typed client, which imports nothing of Slipway's but core. Every count is of transactions
 * (a batch of 3 counts 3, a bundle of 5 counts 5); bundles are counted as bundles too.
 * docs/API.md defines each figure.
 */
import type { OutcomeReason } from './outcome-reasons';

/** The three submission operations, as refusal counts and the report name them. */
export type SubmissionOperation = 'sendTransaction' | 'submitBatch' | 'sendBundle';

export interface TransactionCounts {
  /** Journaled (accepted) in the period: every other count but `refused` is a part of it. */
  submitted: number;
  landed: number;
  /** Landed, and its execution failed (the fee was charged). */
  failedOnChain: number;
  /** Never landed: its blockhash expired, or rebroadcast (or the engine's reports) gave up. */
  expired: number;
  /** Taken by the gateway, then refused by its route (no upstream took it, the block engine rejected the bundle). */
  rejected: number;
  /** Not final yet: forwarded (or held by anti-MEV protection) and still followed. */
  pending: number;
}

/** Nearest-rank percentiles of a set of samples (null when there are none). */
export interface Percentiles {
  samples: number;
  p50: number | null;
  p99: number | null;
}

export interface Statistics {
  transactions: TransactionCounts;
  /** landed + failedOnChain + expired + rejected: the submitted transactions that reached a final state. */
  final: number;
  /** 100 × landed / final, to two decimals; null when nothing is final. */
  landedPercent: number | null;
  /** Of the transactions that landed (landed or failed on chain), from receipt to landing. */
  timeToLand: { ms: Percentiles; slots: Percentiles };
}

export interface Refused {
  /** Refused transactions (never journaled, nothing submitted). */
  transactions: number;
  byReason: Partial<Record<OutcomeReason, number>>;
}

export interface BundleCounts {
  submitted: number;
  landed: number;
  /** Rejected by the block engine or its route, or expired. */
  notLanded: number;
  pending: number;
}

export interface OperationStatistics extends Statistics {
  refused: Refused;
}

export interface LandingStatistics extends Statistics {
  refused: Refused;
  /** sendBundle's submissions, counted as bundles. */
  bundles: BundleCounts;
  byOperation: Record<SubmissionOperation, OperationStatistics>;
  /** By the route the submission went to (its upstreams' names joined by `+`). */
  byRoute: Record<string, Statistics>;
}

export interface LandingReport extends LandingStatistics {
  /** The key whose submissions these are; null: every key's. */
  readonly keyId: string | null;
  /** The period: submissions received from `since` (ISO 8601) until `until` (when the report was made). */
  readonly since: string;
  readonly until: string;
  /** How the landing advice's predictions held for the period's transactions it scored (empty while no advice was asked for). */
  readonly calibration: CalibrationReport;
}

export interface CalibrationDecile {
  /** The decile's predicted chances: from (inclusive) to (exclusive; 1 inclusive for the last). */
  readonly from: number;
  readonly to: number;
  readonly samples: number;
  /** The mean predicted chance, and the share that landed (null when empty). */
  readonly predicted: number | null;
  readonly observed: number | null;
}

export interface CalibrationReport {
  /** The slots the predictions are of: landed within this many slots of receipt. */
  readonly withinSlots: number;
  readonly samples: number;
  /** Mean of (predicted − landed)², 0 best; null without samples. */
  readonly brier: number | null;
  /** The largest |predicted − observed| in percentage points over the deciles with at least `minSamples` samples, or null when none has. */
  readonly maxErrorPoints: number | null;
  readonly minSamples: number;
  readonly deciles: readonly CalibrationDecile[];
}

/** The calibration of the transactions received since `sinceMs` (of one key, when given). */
export type CalibrationSource = (sinceMs: number, keyId?: string) => CalibrationReport;
