/**
 * The landing report's figures, from the journal's transactions and the refusal counts of a
 * period: pure arithmetic, so that the JSON-RPC method, the CLI and the dashboard say the
 * same. Every count is of transactions (a batch of 3 counts 3, a bundle of 5 counts 5);
 * bundles are counted as bundles too. docs/API.md defines each figure.
 */
import type {
  BundleCounts,
  LandingStatistics,
  OperationStatistics,
  Percentiles,
  Refused,
  Statistics,
  TransactionCounts,
} from '../core/landing-report';
import type { OutcomeReason } from '../core/outcome-reasons';
import type { LandingGroup, SubmissionKind } from '../stores/journal';
import type { RefusalCount, RefusedOperation } from '../stores/refusal-counts';

export const OPERATIONS: readonly RefusedOperation[] = ['sendTransaction', 'submitBatch', 'sendBundle'];
/** The journal's kinds by operation. */
const OPERATION_OF: Record<SubmissionKind, RefusedOperation> = {
  transaction: 'sendTransaction',
  batch: 'submitBatch',
  bundle: 'sendBundle',
};

/** The figures of these groups of transactions and refusals (all of one key, or of every key). */
export function landingStatistics(rows: readonly LandingGroup[], refusals: readonly Omit<RefusalCount, 'minute'>[]): LandingStatistics {
  const byRoute = new Map<string, LandingGroup[]>();
  for (const row of rows) {
    const list = byRoute.get(row.route);
    if (list === undefined) byRoute.set(row.route, [row]);
    else list.push(row);
  }
  const byOperation = Object.fromEntries(
    OPERATIONS.map((operation) => [
      operation,
      {
        ...figuresOf(rows.filter((row) => OPERATION_OF[row.kind] === operation)),
        refused: refusedOf(refusals.filter((r) => r.operation === operation)),
      },
    ]),
  ) as Record<RefusedOperation, OperationStatistics>;
  return {
    ...figuresOf(rows),
    refused: refusedOf(refusals),
    bundles: bundlesOf(rows.filter((row) => row.kind === 'bundle')),
    byOperation,
    byRoute: Object.fromEntries([...byRoute].sort(([a], [b]) => a.localeCompare(b)).map(([route, list]) => [route, figuresOf(list)])),
  };
}

function figuresOf(rows: readonly LandingGroup[]): Statistics {
  const transactions: TransactionCounts = { submitted: 0, landed: 0, failedOnChain: 0, expired: 0, rejected: 0, pending: 0 };
  const ms: Sample[] = [];
  const slots: Sample[] = [];
  for (const row of rows) {
    const n = row.transactions;
    transactions.submitted += n;
    if (row.state === 'landed') transactions.landed += n;
    else if (row.state === 'failed') transactions.failedOnChain += n;
    else if (row.state === 'expired') transactions.expired += n;
    else if (row.state === 'rejected') transactions.rejected += n;
    else transactions.pending += n;
    if (row.state === 'landed' || row.state === 'failed') {
      if (row.msToLand !== null) ms.push({ value: Math.max(0, row.msToLand), count: n });
      if (row.slotsToLand !== null) slots.push({ value: row.slotsToLand, count: n });
    }
  }
  const final = transactions.landed + transactions.failedOnChain + transactions.expired + transactions.rejected;
  return {
    transactions,
    final,
    landedPercent: final === 0 ? null : Math.round((transactions.landed / final) * 10_000) / 100,
    timeToLand: { ms: percentiles(ms), slots: percentiles(slots) },
  };
}

function bundlesOf(rows: readonly LandingGroup[]): BundleCounts {
  // A bundle's members share its state and times: each bundle is in one group.
  const counts: BundleCounts = { submitted: 0, landed: 0, notLanded: 0, pending: 0 };
  for (const { state, submissions } of rows) {
    counts.submitted += submissions;
    if (state === 'landed') counts.landed += submissions;
    else if (state === 'forwarded' || state === 'held') counts.pending += submissions;
    else counts.notLanded += submissions;
  }
  return counts;
}

function refusedOf(refusals: readonly Omit<RefusalCount, 'minute'>[]): Refused {
  const byReason: Partial<Record<OutcomeReason, number>> = {};
  let transactions = 0;
  for (const r of refusals) {
    transactions += r.count;
    byReason[r.reasonCode] = (byReason[r.reasonCode] ?? 0) + r.count;
  }
  return { transactions, byReason };
}

/** A value and how many samples have it. */
export interface Sample {
  readonly value: number;
  readonly count: number;
}

/** Nearest rank: the p-th percentile is the smallest sample with at least p % of the samples at or below it. */
export function percentiles(samples: readonly Sample[]): Percentiles {
  const total = samples.reduce((n, s) => n + s.count, 0);
  if (total === 0) return { samples: 0, p50: null, p99: null };
  const sorted = [...samples].sort((a, b) => a.value - b.value);
  const rank = (p: number) => {
    const wanted = Math.max(1, Math.ceil((p / 100) * total));
    let seen = 0;
    for (const { value, count } of sorted) {
      seen += count;
      if (seen >= wanted) return value;
    }
    return sorted.at(-1)!.value;
  };
  return { samples: total, p50: rank(50), p99: rank(99) };
}
