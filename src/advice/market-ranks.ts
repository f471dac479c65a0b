/**
 * Where a transaction stands in the market of the moment: a snapshot of the scheduling
 * priorities (and tips) that landed in the last RANK_SLOTS blocks, kept as percentile tables so
 * that thousands of snapshots cost little, and the rank of a priority in it (0..1). Per
 * account too, for the accounts written often enough to have a market of their own (a hot
 * account): a transaction writing one ranks by the lower of its two ranks, and the priority
 * for a rank is the higher of the two, as the fee levels take the largest over their series.
 * Priorities rather than prices, because the leader orders by them (priority-price.ts). No I/O.
 */
import type { SlotFees } from './block-fees';
import { percentile } from './fee-levels';

/** Blocks one snapshot is taken over (8 s of 400 ms slots). */
export const RANK_SLOTS = 20;
/** An account has a market of its own when this many landed transactions wrote it. */
const ACCOUNT_MARKET_SAMPLES = 20;
const STEPS = 100;

/** Percentiles 0..100 of a series (priorities, tips), ascending. */
export type PriceTable = Float64Array;

export interface MarketSnapshot {
  readonly atMs: number;
  readonly slot: number;
  /** Landed transactions the snapshot rests on (votes and failed ones left out). */
  readonly transactions: number;
  /** Their scheduling priorities. */
  readonly priorities: PriceTable | null;
  /** Landed tips (lamports) of transactions that paid one. */
  readonly tips: PriceTable | null;
  readonly tipSamples: number;
  readonly accounts: ReadonlyMap<string, PriceTable>;
}

/** The snapshot of `window` (newest first; the first RANK_SLOTS are read) at `atMs`. */
export function snapshotOf(window: readonly SlotFees[], atMs: number): MarketSnapshot {
  const priorities: number[] = [];
  const tips: number[] = [];
  const byAccount = new Map<string, number[]>();
  for (const { samples } of window.slice(0, RANK_SLOTS)) {
    for (const sample of samples) {
      if (sample.vote || sample.failed) continue;
      priorities.push(sample.priority);
      if (sample.tip > 0) tips.push(sample.tip);
      for (const account of sample.accounts) {
        const series = byAccount.get(account);
        if (series === undefined) byAccount.set(account, [sample.priority]);
        else series.push(sample.priority);
      }
    }
  }
  const accounts = new Map<string, PriceTable>();
  for (const [account, series] of byAccount) if (series.length >= ACCOUNT_MARKET_SAMPLES) accounts.set(account, tableOf(series)!);
  return {
    atMs,
    slot: window[0]?.slot ?? 0,
    transactions: priorities.length,
    priorities: tableOf(priorities),
    tips: tableOf(tips),
    tipSamples: tips.length,
    accounts,
  };
}

function tableOf(series: readonly number[]): PriceTable | null {
  if (series.length === 0) return null;
  const sorted = [...series].sort((a, b) => a - b);
  const table = new Float64Array(STEPS + 1);
  for (let i = 0; i <= STEPS; i++) table[i] = percentile(sorted, i);
  return table;
}

/** The rank of `value` in `table`: the middle of the ranks that hold it exactly, interpolated between percentiles. */
export function rankIn(table: PriceTable, value: number): number {
  if (value < table[0]!) return 0;
  if (value > table[STEPS]!) return 1;
  let low = 0;
  while (table[low]! < value) low++;
  if (table[low]! > value) {
    const [a, b] = [table[low - 1]!, table[low]!];
    return (low - 1 + (value - a) / (b - a)) / STEPS;
  }
  let high = low;
  while (high < STEPS && table[high + 1] === value) high++;
  return (low + high) / 2 / STEPS;
}

/** The value at `rank` in `table`, rounded up. */
export function priceAt(table: PriceTable, rank: number): number {
  const position = Math.min(1, Math.max(0, rank)) * STEPS;
  const i = Math.floor(position);
  const a = table[i]!;
  const b = table[Math.min(STEPS, i + 1)]!;
  return Math.ceil(a + (position - i) * (b - a));
}

/** A transaction's rank: the lower of its priority's rank in the market and in the markets of the accounts it writes that have one. */
export function transactionRank(snapshot: MarketSnapshot, priority: number, accounts: readonly string[]): number | null {
  if (snapshot.priorities === null) return null;
  let rank = rankIn(snapshot.priorities, priority);
  for (const account of accounts) {
    const table = snapshot.accounts.get(account);
    if (table !== undefined) rank = Math.min(rank, rankIn(table, priority));
  }
  return rank;
}

/** The priority for `rank`: the higher of the market's and of the markets of these accounts. */
export function priorityForRank(snapshot: MarketSnapshot, rank: number, accounts: readonly string[]): number {
  if (snapshot.priorities === null) return 0;
  let priority = priceAt(snapshot.priorities, rank);
  for (const account of accounts) {
    const table = snapshot.accounts.get(account);
    if (table !== undefined) priority = Math.max(priority, priceAt(table, rank));
  }
  return priority;
}
