/**
 * The landing report's fee figures from what each landed transaction paid and how far above
 * the lowest priority of its slot it stood (advice/advice-scores.ts records them). Pure
 * arithmetic, as landing-statistics.ts.
 */
import type { FeeReport } from '../core/landing-report';
import { percentiles } from './landing-statistics';

export interface FeePaid {
  readonly keyId: string;
  /** When the transaction was received (epoch ms). */
  readonly atMs: number;
  readonly feeLamports: number;
  /** Its priority ÷ the lowest that landed in its slot. */
  readonly overpayment: number;
}

export function feeReportOf(paid: readonly FeePaid[]): FeeReport {
  const fees = percentiles(paid.map((p) => ({ value: p.feeLamports, count: 1 })));
  const over = paid.map((p) => p.overpayment).sort((a, b) => a - b);
  const rank = (q: number) => (over.length === 0 ? null : round3(over[Math.max(0, Math.ceil(q * over.length) - 1)]!));
  return {
    samples: paid.length,
    feeLamports: {
      p50: fees.p50,
      p99: fees.p99,
      mean: paid.length === 0 ? null : Math.round(paid.reduce((n, p) => n + p.feeLamports, 0) / paid.length),
    },
    overpayment: { p50: rank(0.5), p90: rank(0.9) },
  };
}

const round3 = (x: number) => Math.round(x * 1_000) / 1_000;
