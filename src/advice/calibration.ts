/**
 * How well the landing advice's predictions held: each outcome scored once with the chance the
 * curve in force when it was sent gave it (landing-advice.ts), and whether it then landed
 * within the calibration's slots; read back per decile of the predicted chance (the mean
 * predicted against the share that landed) with the Brier score (the mean squared error of
 * the predictions). Kept in memory, bounded. No I/O.
 */
import type { CalibrationReport } from '../core/landing-report';
import { calibrationOf, type Score } from '../reports/calibration-statistics';

/** Scores kept at most (the oldest forgotten first), and for at most KEEP_MS. */
const MAX_SCORES = 200_000;
const KEEP_MS = 24 * 3_600_000;

export class Calibration {
  private scores: Score[] = [];

  constructor(readonly withinSlots: number) {}

  add(score: Score): void {
    this.scores.push(score);
    if (this.scores.length > MAX_SCORES) this.scores = this.scores.slice(-MAX_SCORES / 2);
  }

  /** The report of the scores of transactions received since `sinceMs` (of one key when given), forgetting those past KEEP_MS of `nowMs`. */
  report(sinceMs: number, nowMs: number, keyId?: string): CalibrationReport {
    const oldest = nowMs - KEEP_MS;
    if (this.scores.length > 0 && this.scores[0]!.atMs < oldest) this.scores = this.scores.filter((s) => s.atMs >= oldest);
    const chosen = this.scores.filter((s) => s.atMs >= sinceMs && (keyId === undefined || s.keyId === keyId));
    return calibrationOf(chosen, this.withinSlots);
  }
}
