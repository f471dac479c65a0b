/**
 * What the landing advice learnt of the transactions it followed, kept in memory (bounded)
 * for the landing report: each scored once with the chance the curve in force when it was
 * received gave it and whether it then landed within the calibration's slots
 * (reports/calibration-statistics.ts), and, once it landed in a block the advice read, what it
 * paid and how far above the lowest priority of that block it stood (reports/fee-statistics.ts).
 * No I/O.
 */
import type { LandingReport } from '../core/landing-report';
import { calibrationOf, CALIBRATION_SLOTS, type Score } from '../reports/calibration-statistics';
import { feeReportOf, type FeePaid } from '../reports/fee-statistics';

/** Records kept at most of each kind (the oldest forgotten first), and for at most KEEP_MS. */
const MAX_RECORDS = 200_000;
const KEEP_MS = 24 * 3_600_000;

export class AdviceScores {
  private scores: Score[] = [];
  private paid: FeePaid[] = [];

  score(score: Score): void {
    this.scores = bounded(this.scores, score);
  }

  feePaid(paid: FeePaid): void {
    this.paid = bounded(this.paid, paid);
  }

  /** The figures of the transactions received since `sinceMs` (of one key when given), forgetting those past KEEP_MS of `nowMs`. */
  figures(sinceMs: number, nowMs: number, keyId?: string): Pick<LandingReport, 'calibration' | 'fees'> {
    const oldest = nowMs - KEEP_MS;
    this.scores = this.scores.filter((s) => s.atMs >= oldest);
    this.paid = this.paid.filter((p) => p.atMs >= oldest);
    const chosen = <T extends { atMs: number; keyId: string }>(list: readonly T[]) =>
      list.filter((r) => r.atMs >= sinceMs && (keyId === undefined || r.keyId === keyId));
    return { calibration: calibrationOf(chosen(this.scores), CALIBRATION_SLOTS), fees: feeReportOf(chosen(this.paid)) };
  }
}

function bounded<T>(list: T[], item: T): T[] {
  list.push(item);
  return list.length > MAX_RECORDS ? list.slice(-MAX_RECORDS / 2) : list;
}
