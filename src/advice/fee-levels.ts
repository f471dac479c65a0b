/**
 * The priority-fee levels of `getPriorityFeeEstimate`, computed as Helius's open estimator
 * does (helius-labs/atlas-priority-fee-estimator 59971bf, priority_fee_calculation.rs
 * `calculate_priority_fee_details` V2, priority_fee.rs, model.rs), from the fee samples of
 * recent slots (block-fees.ts). No I/O.
 *
 * - Failed transactions are left out; a transaction without a price counts as 0.
 * - One series for all transactions of the window ("global", votes only when asked for) and
 *   one per requested account, of the prices of the transactions writing it; a slot where
 *   the account was not written adds one 0 to its series when `emptySlotAsZero`.
 * - Each level is a percentile (Min 0, Low 25, Medium 50, High 75, VeryHigh 95, UnsafeMax
 *   100) of each series, interpolated as statrs's `percentile` (Hyndman and Fan's type 8),
 *   rounded; the answer is the largest over the series, and never under 0. An empty series
 *   counts for nothing; with no data at all every level is 0.
 * - A slot with no priced transaction is not a slot of the window (the estimator keeps a slot
 *   only once a transaction of it arrived).
 */
import type { SlotFees } from './block-fees';

export const LEVEL_PERCENTILES = { min: 0, low: 25, medium: 50, high: 75, veryHigh: 95, unsafeMax: 100 } as const;
export type Level = keyof typeof LEVEL_PERCENTILES;
export type Levels = Record<Level, number>;

/** rpc_server.rs get_recommended_fee: the medium level, at least 10,000 micro-lamports per unit. */
export const RECOMMENDED_FLOOR = 10_000;

export interface LevelOptions {
  readonly includeVote: boolean;
  readonly emptySlotAsZero: boolean;
}

/** statrs 0.17.1 `Data::quantile` (slice_statistics.rs): type-8 interpolation; NaN for an empty series. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const tau = p / 100;
  const h = (sorted.length + 1 / 3) * tau + 1 / 3;
  const hf = Math.trunc(h);
  if (hf <= 0 || tau === 0) return sorted[0]!;
  if (hf >= sorted.length || tau === 1) return sorted[sorted.length - 1]!;
  const a = sorted[hf - 1]!;
  const b = sorted[hf]!;
  return a + (h - hf) * (b - a);
}

/** The levels over `window` (the most recent slots first, as many as are looked back over) for `accounts`. */
export function feeLevels(window: readonly SlotFees[], accounts: readonly string[], options: LevelOptions): Levels {
  const global: number[] = [];
  const perAccount = accounts.map(() => [] as number[]);
  // Each requested account's series, by address (an account asked for twice has its prices twice, as there).
  const asked = new Map<string, number[]>();
  accounts.forEach((account, i) => asked.set(account, [...(asked.get(account) ?? []), i]));
  for (const { samples } of window) {
    const written = new Set<string>();
    let priced = 0;
    for (const sample of samples) {
      if (sample.failed) continue;
      priced++;
      const counted = options.includeVote || !sample.vote;
      if (counted) global.push(sample.price);
      for (const account of sample.accounts) {
        const series = asked.get(account);
        if (series === undefined) continue;
        written.add(account);
        if (counted) for (const i of series) perAccount[i]!.push(sample.price);
      }
    }
    if (priced === 0 || !options.emptySlotAsZero) continue;
    accounts.forEach((account, i) => {
      if (!written.has(account)) perAccount[i]!.push(0);
    });
  }
  const levels = {} as Levels;
  for (const [level, p] of Object.entries(LEVEL_PERCENTILES) as [Level, number][]) {
    let value = 0;
    for (const series of [global, ...perAccount]) {
      const estimate = roundHalfAway(percentile(series, p));
      if (estimate > value) value = estimate;
    }
    levels[level] = value;
  }
  return levels;
}

/** f64::round: halves away from zero (NaN stays NaN). */
function roundHalfAway(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}
