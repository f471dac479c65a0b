/**
 * Jito's tip floor (`GET /api/v1/bundles/tip_floor`) from the tips of bundles Slipway saw
 * land: one entry in Jito's shape, `{time, landed_tips_25th_percentile, …_50th, …_75th,
 * …_95th, …_99th, ema_landed_tips_50th_percentile}`, in SOL. Jito does not publish how it
 * computes them; here: the percentiles (interpolated as fee-levels.ts's) of the tips landed in
 * the last WINDOW_MINUTES minutes, `time` the current minute, and the EMA (α 0.2) of each
 * past minute's median, oldest first. No I/O, no clock: the caller gives the time.
 */
import { percentile } from './fee-levels';

const WINDOW_MINUTES = 5;
/** Minutes kept (for the EMA): an hour. */
const KEPT_MINUTES = 60;
const EMA_ALPHA = 0.2;
const LAMPORTS_PER_SOL = 1_000_000_000;
const MINUTE_MS = 60_000;

export interface TipFloorEntry {
  readonly time: string;
  readonly landed_tips_25th_percentile: number;
  readonly landed_tips_50th_percentile: number;
  readonly landed_tips_75th_percentile: number;
  readonly landed_tips_95th_percentile: number;
  readonly landed_tips_99th_percentile: number;
  readonly ema_landed_tips_50th_percentile: number;
}

export class TipFloor {
  /** Minute (since the epoch) → the tips (lamports) of the bundles that landed in it. */
  private readonly minutes = new Map<number, number[]>();

  /** A bundle with a tip of `lamports` landed at `atMs`. */
  record(lamports: number, atMs: number): void {
    const minute = Math.floor(atMs / MINUTE_MS);
    let tips = this.minutes.get(minute);
    if (tips === undefined) this.minutes.set(minute, (tips = []));
    tips.push(lamports);
    for (const kept of this.minutes.keys()) if (kept <= minute - KEPT_MINUTES) this.minutes.delete(kept);
  }

  /** The tip floor at `nowMs`, or null when no bundle landed in the window. */
  entry(nowMs: number): TipFloorEntry | null {
    const minute = Math.floor(nowMs / MINUTE_MS);
    const recent: number[] = [];
    let ema: number | undefined;
    for (const [kept, tips] of [...this.minutes].sort(([a], [b]) => a - b)) {
      if (kept > minute) continue;
      if (kept > minute - WINDOW_MINUTES) recent.push(...tips);
      if (kept < minute) {
        const median = percentile(tips, 50);
        ema = ema === undefined ? median : EMA_ALPHA * median + (1 - EMA_ALPHA) * ema;
      }
    }
    if (recent.length === 0) return null;
    const sol = (lamports: number) => lamports / LAMPORTS_PER_SOL;
    const at = (p: number) => sol(percentile(recent, p));
    return {
      time: new Date(minute * MINUTE_MS).toISOString().replace('.000Z', 'Z'),
      landed_tips_25th_percentile: at(25),
      landed_tips_50th_percentile: at(50),
      landed_tips_75th_percentile: at(75),
      landed_tips_95th_percentile: at(95),
      landed_tips_99th_percentile: at(99),
      ema_landed_tips_50th_percentile: ema === undefined ? at(50) : sol(ema),
    };
  }
}
