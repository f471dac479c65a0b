/** What `npm run bench` measures and writes to bench/results/latest.json: its shape, shared by the run and its report. */
import type { CostPart } from './cost-parts';
import type { TpuCost } from './tpu-cost';
import type { CoreRun } from './core-runs';
import type { LoadResult } from './load';
import type { LandingByRoute, LandingStatistics } from './landing-shapes';

export interface SoakResult {
  readonly seconds: number;
  readonly rps: number;
  readonly duplicateTtlMs: number;
  /** Resident set of the Slipway process, one sample a second. */
  readonly rssMiB: number[];
}

export interface BenchResults extends LandingStatistics {
  readonly mode: string;
  /** The commit measured (full hash), and whether the working tree had uncommitted changes then. */
  readonly commit: string;
  readonly uncommittedChanges: boolean;
  readonly machine: { cores: number; cpu: string; memoryGiB: number; node: string; platform: string };
  /** How fast the machine was that day (medians over the runs): judge a figure against these. */
  readonly machineState: { ceilingRps: number; ceilingCpuUsPerRequest: number; libsodiumVerifyUs: number; stealPct: number };
  readonly startedAt: string;
  /** How many times the core measurement ran; `ratios` are their medians, `spread` their range. */
  readonly runs: number;
  /** The run whose headline ratio is the median, in full. */
  readonly ceiling: CoreRun['ceiling'];
  readonly slipway: CoreRun['slipway'] & { embeddedLedger: LoadResult };
  readonly rates: CoreRun['rates'];
  readonly eachRun: readonly {
    ceilingRps: number;
    ceilingCpuUsPerRequest: number;
    libsodiumVerifyUs: number;
    stealPct: number;
    ratios: Record<string, number>;
  }[];
  readonly costParts: CostPart[];
  /** Sending to a TPU over QUIC, beside the dgram.send floor of the same run. */
  readonly tpu: TpuCost;
  /** The sending process's CPU per transaction acknowledged whole, one connection (µs). */
  readonly tpu_cpu_us_per_tx: number;
  /** The CPU per 1,252-byte datagram of a process that only calls dgram.send (µs). */
  readonly udp_send_cpu_us_per_datagram: number;
  readonly tpu_cpu_per_tx_vs_udp_send: number;
  /** Transactions signed while a run was going because the pre-signed ones ran out (should be 0). */
  readonly signedDuringRuns: number;
  readonly soak?: SoakResult;
  /** RPC fan-out, Jito and TPU under the same offered load on the local cluster (landing-by-route.ts). */
  readonly landing?: LandingByRoute;
  readonly ratios: Record<string, number>;
  readonly spread: Record<string, { min: number; max: number }>;
}
