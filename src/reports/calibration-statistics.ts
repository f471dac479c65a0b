/**
 * The calibration's figures from scored predictions: per decile of the predicted chance, the
 * mean predicted against the share that landed, and the Brier score (the mean squared error
 * of the predictions). Pure arithmetic, as landing-statistics.ts.
 */
import type { CalibrationReport } from '../core/landing-report';

export interface Score {
  readonly keyId: string;
  /** When the transaction was received (epoch ms). */
  readonly atMs: number;
  readonly predicted: number;
  readonly landed: boolean;
}

/** The slots the calibration is of: landed within this many slots of receipt (the landing benchmark's k). */
export const CALIBRATION_SLOTS = 8;

/** A decile counts towards the largest error once it holds this many samples. */
export const DECILE_MIN_SAMPLES = 100;

export function calibrationOf(scores: readonly Score[], withinSlots: number): CalibrationReport {
  const bins = Array.from({ length: 10 }, () => ({ samples: 0, predicted: 0, landed: 0 }));
  let squared = 0;
  for (const { predicted, landed } of scores) {
    const bin = bins[Math.min(9, Math.floor(predicted * 10))]!;
    bin.samples++;
    bin.predicted += predicted;
    bin.landed += landed ? 1 : 0;
    squared += (predicted - (landed ? 1 : 0)) ** 2;
  }
  const deciles = bins.map((bin, i) => ({
    from: i / 10,
    to: (i + 1) / 10,
    samples: bin.samples,
    predicted: bin.samples === 0 ? null : round4(bin.predicted / bin.samples),
    observed: bin.samples === 0 ? null : round4(bin.landed / bin.samples),
  }));
  const errors = deciles.filter((d) => d.samples >= DECILE_MIN_SAMPLES).map((d) => Math.abs(d.predicted! - d.observed!) * 100);
  return {
    withinSlots,
    samples: scores.length,
    brier: scores.length === 0 ? null : round4(squared / scores.length),
    maxErrorPoints: errors.length === 0 ? null : Math.round(Math.max(...errors) * 10) / 10,
    minSamples: DECILE_MIN_SAMPLES,
    deciles,
  };
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
