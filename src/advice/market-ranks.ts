/**
 * Where a transaction stands in the market of the moment: a snapshot of the scheduling
 * priorities (and tips) that landed in the last RANK_SLOTS blocks, and apart in the newest
 * one (RECENT_SLOTS), kept as percentile tables so that thousands of snapshots cost little, and the
 * rank of a priority in it (0..1 within what landed, below 0 under it). Per account too, for
 * the accounts written often enough to have a market of their own (a hot account). A
 * transaction ranks by the lowest of its ranks in these markets, and the priority for a rank
 * is the highest of theirs, as the fee levels take the largest over their series: the recent
 * blocks, because a burst on an account (a token launch) moves its market within a slot or
 * two, and the cheapest of 20 blocks stays where it was before the burst until the burst has
 * filled all 20 (bench:landing at 4x: transfers to the hot account, priced there for ten slots
 * after a burst began, waited out the burst). Priorities rather than prices, because the
 * leader orders by them (priority-price.ts). No I/O.
 *
 * A fee payer's own account is not a market: every transaction it sends writes it, so a busy
 * sender's payer had a market of its own transactions alone, and the advice priced it one
 * above its own last prices — rising with every answer (bench:landing: (a) paid 20,001
 * micro-lamports a unit where a Medium estimate paid 14,012 and landed as well).
 */
import type { SlotFees } from './block-fees';
import { percentile } from './fee-levels';

/** Blocks one snapshot is taken over (8 s of 400 ms slots). */
export const RANK_SLOTS = 20;
/**
 * The recent blocks, taken apart: the newest alone, because the cheapest of any span stays
 * where it was until a burst has filled the whole span, and the advice prices near the cheapest.
 */
export const RECENT_SLOTS = 1;
/** An account has a market of its own when this many landed transactions wrote it (other than as their fee payer). */
const ACCOUNT_MARKET_SAMPLES = 20;
const STEPS = 100;

/** Percentiles 0..100 of a series (priorities, tips), ascending. */
export type PriceTable = Float64Array;

/** Landed priorities over some blocks: the whole market, and the accounts with a market of their own. */
export interface Market {
  readonly priorities: PriceTable | null;
  readonly accounts: ReadonlyMap<string, PriceTable>;
}

export interface MarketSnapshot extends Market {
  readonly atMs: number;
  readonly slot: number;
  /** Landed transactions the snapshot rests on (votes, failed and tipped ones left out). */
  readonly transactions: number;
  /** Landed tips (lamports) of transactions that paid one. */
  readonly tips: PriceTable | null;
  readonly tipSamples: number;
  /** The same over the newest RECENT_SLOTS blocks. */
  readonly recent: Market;
}

/** The snapshot of `window` (newest first; the first RANK_SLOTS are read) at `atMs`. */
export function snapshotOf(window: readonly SlotFees[], atMs: number): MarketSnapshot {
  const tips: number[] = [];
  for (const { samples } of window.slice(0, RANK_SLOTS))
    for (const sample of samples) if (!sample.vote && !sample.failed && sample.tip > 0) tips.push(sample.tip);
  const { market, transactions } = marketOf(window.slice(0, RANK_SLOTS));
  return {
    atMs,
    slot: window[0]?.slot ?? 0,
    transactions,
    ...market,
    tips: tableOf(tips),
    tipSamples: tips.length,
    recent: marketOf(window.slice(0, RECENT_SLOTS)).market,
  };
}

function marketOf(blocks: readonly SlotFees[]): { market: Market; transactions: number } {
  const priorities: number[] = [];
  const byAccount = new Map<string, number[]>();
  for (const { samples } of blocks) {
    for (const sample of samples) {
      // A tipped transaction won its place in the block engine's auction, not by its priority.
      if (sample.vote || sample.failed || sample.tip > 0) continue;
      priorities.push(sample.priority);
      // The first writable account is the fee payer (block-fees.ts): not a market (above).
      for (const account of sample.accounts.slice(1)) {
        const series = byAccount.get(account);
        if (series === undefined) byAccount.set(account, [sample.priority]);
        else series.push(sample.priority);
      }
    }
  }
  const accounts = new Map<string, PriceTable>();
  for (const [account, series] of byAccount) if (series.length >= ACCOUNT_MARKET_SAMPLES) accounts.set(account, tableOf(series)!);
  return { market: { priorities: tableOf(priorities), accounts }, transactions: priorities.length };
}

function tableOf(series: readonly number[]): PriceTable | null {
  if (series.length === 0) return null;
  const sorted = [...series].sort((a, b) => a - b);
  const table = new Float64Array(STEPS + 1);
  for (let i = 0; i <= STEPS; i++) table[i] = percentile(sorted, i);
  return table;
}

/**
 * The rank of `value` in `table`: the middle of the ranks that hold it exactly, interpolated
 * between percentiles; above the dearest, 1; below the cheapest, how far below it as a share of
 * it, negative (−0.5: half the cheapest; −1 at the least). Ranks below 0 keep apart what a
 * clamp to 0 joined: a transaction one under the cheapest that landed and one far under it,
 * and either from one level with it. Joined, the learnt curve could not tell a price that
 * never lands from one that always does, and advice for a low chance was the cheapest landed
 * price, which nearly always lands (bench:landing measured 5 % asked, 99 % landed).
 */
export function rankIn(table: PriceTable, value: number): number {
  if (value < table[0]!) return table[0]! > 0 ? Math.max(-1, value / table[0]! - 1) : 0;
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

/** The value at `rank` in `table`, rounded up (below 0: that share under the cheapest, as rankIn). */
export function priceAt(table: PriceTable, rank: number): number {
  if (rank < 0) return Math.ceil(table[0]! * (1 + Math.max(-1, rank)));
  const position = Math.min(1, Math.max(0, rank)) * STEPS;
  const i = Math.floor(position);
  const a = table[i]!;
  const b = table[Math.min(STEPS, i + 1)]!;
  return Math.ceil(a + (position - i) * (b - a));
}

/** The tables a transaction writing `accounts` is ranked in: the market's and those accounts', over both spans. */
function tablesFor(snapshot: MarketSnapshot, accounts: readonly string[]): PriceTable[] {
  const tables: PriceTable[] = [];
  for (const market of [snapshot, snapshot.recent]) {
    if (market.priorities !== null) tables.push(market.priorities);
    for (const account of accounts) {
      const table = market.accounts.get(account);
      if (table !== undefined) tables.push(table);
    }
  }
  return tables;
}

/** A transaction's rank: the lowest of its priority's ranks in the market and in the markets of the accounts it writes, of the 20 blocks and of the recent ones. */
export function transactionRank(snapshot: MarketSnapshot, priority: number, accounts: readonly string[]): number | null {
  if (snapshot.priorities === null) return null;
  return Math.min(...tablesFor(snapshot, accounts).map((table) => rankIn(table, priority)));
}

/** The priority for `rank`: the highest of the markets' (as transactionRank takes them). */
export function priorityForRank(snapshot: MarketSnapshot, rank: number, accounts: readonly string[]): number {
  if (snapshot.priorities === null) return 0;
  return Math.max(...tablesFor(snapshot, accounts).map((table) => priceAt(table, rank)));
}
