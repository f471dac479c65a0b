/** What the landing step measures (landing-by-route.ts), as latest.json and landing.json keep it. */
import type { RouteName } from './landing-gateways';

export interface RouteLanding {
  readonly route: RouteName;
  readonly description: string;
  readonly sent: number;
  /** Answered with the transaction's signature. */
  readonly accepted: number;
  /** Refused or failed, by error (at most 5 distinct kept). */
  readonly refused: number;
  readonly refusals: Record<string, number>;
  /** Included in a slot, whether or not it failed there. */
  readonly landed: number;
  readonly landedPct: number;
  /** Landed with an error (a transfer should not). */
  readonly failedOnChain: number;
  /** Not landed, and its blockhash expired: it never will. */
  readonly expired: number;
  /** Not landed when the wait ended, its blockhash still valid. */
  readonly unresolved: number;
  /** Landing slot minus the cluster's slot when the request was made, over the landed. */
  readonly slots: { readonly p50: number | null; readonly p99: number | null; readonly max: number | null };
  /** How many landed that many slots after the request. */
  readonly slotHistogram: Record<string, number>;
  /**
   * The median answer time (ms) of those that landed that many slots after the request: the
   * slots a route takes come from the time before the cluster has the transaction, or not.
   */
  readonly answerMsBySlots: Record<string, number>;
  /** The gateway's answer time as the client saw it, ms. */
  readonly answerMs: { readonly p50: number | null; readonly p99: number | null };
  /** How the landed ones reached the cluster, as it recorded them (getTransactionExposure): public, private or tpu. */
  readonly paths: Record<string, number>;
}

export interface LandingByRoute {
  readonly slotMs: number;
  readonly validators: number;
  readonly ratePerRoute: number;
  readonly sendSeconds: number;
  /** Seconds from the last send until every transaction was resolved or the wait ran out. */
  readonly waitedSeconds: number;
  readonly maxWaitSeconds: number;
  readonly routes: RouteLanding[];
  /** CPU while the load ran, in % of one core: each process, and the whole machine (others' work included) with what the host stole. */
  readonly cpu: {
    readonly clusterPct: number;
    readonly gatewaysPct: Record<RouteName, number>;
    readonly benchPct: number;
    readonly machineBusyPct: number;
    readonly machineStealPct: number;
    readonly cores: number;
  };
}

/** The landing step's figures under stable flat names, as the TPU's are: `landing_rpc_landed_pct`, `landing_tpu_slots_p99`, … */
export type LandingStatistics = Partial<Record<`landing_${RouteName}_${'landed_pct' | 'slots_p50' | 'slots_p99'}`, number | null>>;
