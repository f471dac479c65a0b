/**
 * The landing report of a period: the journal's transactions received in it and the refusal
 * counts of its minutes (stores/refusal-counts.ts), as figures (landing-statistics.ts), for one key or
 * for every key. The JSON-RPC method `getLandingReport`, `bin/slipway report` and the
 * dashboard all read it here.
 */
import type { Journal } from '../stores/journal';
import type { CalibrationSource, LandingReport } from '../core/landing-report';
import { landingStatistics } from './landing-statistics';
import { calibrationOf, CALIBRATION_SLOTS } from './calibration-statistics';
import type { RefusalCounts } from '../stores/refusal-counts';

/** The longest period a report covers: its transactions are read and sorted in memory. */
export const MAX_PERIOD_MS = 7 * 24 * 3_600_000;
export const DEFAULT_PERIOD_MS = 24 * 3_600_000;
/** How long one key's report of one period is given again to the same key instead of read anew. */
export const REUSE_MS = 2_000;

export interface LandingReports {
  /** One key's report (its own submissions only) of the last `periodMs`. */
  ofKey(keyId: string, periodMs: number): Promise<LandingReport>;
  /** Every key's report, and all keys together, of the last `periodMs`: one read of each store. */
  ofEveryKey(periodMs: number): Promise<{ all: LandingReport; keys: LandingReport[] }>;
}

export function createLandingReports(
  journal: Pick<Journal, 'landingGroups'>,
  refusals: Pick<RefusalCounts, 'totals'>,
  calibration: CalibrationSource = noCalibration,
): LandingReports {
  const read = async (periodMs: number, keyId?: string) => {
    const until = Date.now();
    const sinceMs = until - periodMs;
    const [rows, refused] = await Promise.all([journal.landingGroups({ sinceMs, keyId }), refusals.totals({ sinceMs, keyId })]);
    const period = { since: new Date(sinceMs).toISOString(), until: new Date(until).toISOString() };
    return { rows, refused, period, sinceMs };
  };
  // A key asking again and again (a loop, a JSON-RPC batch of reports) shares one read of the
  // journal per period for REUSE_MS: each read scans the period's rows, the figures are made on
  // the request thread, and a key without a reads limit could otherwise keep both busy.
  const recent = new Map<string, { at: number; report: Promise<LandingReport> }>();
  const ofKey = async (keyId: string, periodMs: number): Promise<LandingReport> => {
    const { rows, refused, period, sinceMs } = await read(periodMs, keyId);
    return { keyId, ...period, ...landingStatistics(rows, refused), calibration: calibration(sinceMs, keyId) };
  };
  return {
    ofKey(keyId, periodMs) {
      const now = Date.now();
      const id = `${keyId}\n${periodMs}`;
      const known = recent.get(id);
      if (known !== undefined && now - known.at < REUSE_MS) return known.report;
      for (const [other, entry] of recent) if (now - entry.at >= REUSE_MS) recent.delete(other);
      const report = ofKey(keyId, periodMs);
      recent.set(id, { at: now, report });
      report.catch(() => recent.delete(id)); // a failed read is not shared: the next call tries again
      return report;
    },
    async ofEveryKey(periodMs) {
      const { rows, refused, period, sinceMs } = await read(periodMs);
      const keyIds = [...new Set([...rows.map((r) => r.keyId), ...refused.map((r) => r.keyId)])].sort();
      return {
        all: { keyId: null, ...period, ...landingStatistics(rows, refused), calibration: calibration(sinceMs) },
        keys: keyIds.map((keyId) => ({
          keyId,
          ...period,
          ...landingStatistics(
            rows.filter((r) => r.keyId === keyId),
            refused.filter((r) => r.keyId === keyId),
          ),
          calibration: calibration(sinceMs, keyId),
        })),
      };
    },
  };
}

/** Without landing advice: no scores. */
const noCalibration: CalibrationSource = () => calibrationOf([], CALIBRATION_SLOTS);

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A report's period: a duration (`15m`, `24h`, `7d`, `90s`) or, where JSON allows, a number
 * of seconds; up to MAX_PERIOD_MS. Returns the milliseconds, or why the value is refused.
 */
export function parsePeriod(value: unknown): number | string {
  let ms: number;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || !Number.isInteger(value))
      return 'since must be a whole number of seconds or a duration such as "15m", "24h", "7d"';
    ms = value * 1_000;
  } else if (typeof value === 'string') {
    const match = /^([0-9]{1,7})([smhd])$/.exec(value);
    if (match === null)
      return `since must be a duration such as "15m", "24h", "7d" (a number and s, m, h or d), not ${JSON.stringify(value.slice(0, 40))}`;
    ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  } else {
    return 'since must be a whole number of seconds or a duration such as "15m", "24h", "7d"';
  }
  if (ms <= 0) return 'since must be a positive period';
  if (ms > MAX_PERIOD_MS) return `since may cover at most 7 days (604800 seconds, "7d")`;
  return ms;
}
