/** What `npm run bench` measures and writes to bench/results/latest.json: its shape, shared by the run and its report. */
import type { CostPart } from './cost-parts';
import type { LoadResult } from './load';
import type { LatencyResult } from './open-loop';

export interface SoakResult {
  readonly seconds: number;
  readonly rps: number;
  readonly duplicateTtlMs: number;
  /** Resident set of the Slipway process, one sample a second. */
  readonly rssMiB: number[];
}

export interface BenchResults {
  readonly mode: string;
  readonly machine: { cores: number; cpu: string; memoryGiB: number; node: string; platform: string };
  readonly startedAt: string;
  readonly ceiling: { load: LoadResult; fixedRate: LatencyResult };
  readonly slipway: {
    sendTransaction: LoadResult;
    sendTransactionNoVerify: LoadResult;
    /** The same as sendTransaction, at the default log level (info): the runs above log at warn. */
    sendTransactionLogInfo?: LoadResult;
    submitBatch: LoadResult & { tps: number };
    sendBundle: LoadResult & { tps: number };
    fixedRate: LatencyResult;
    embeddedLedger: LoadResult;
  };
  readonly costParts: CostPart[];
  /** Transactions signed while a run was going because the pre-signed ones ran out (should be 0). */
  readonly signedDuringRuns: number;
  readonly soak?: SoakResult;
  readonly ratios: Record<string, number>;
}
