/**
 * `getLandingEstimate`'s request and answer (docs/FEES.md): shared by the advice that answers
 * it and the typed client that asks.
 */

/** What to ask: a transaction (base64), or the accounts it writes and its compute-unit limit; the chance of landing within `withinSlots` slots. */
export type LandingEstimateRequest = (
  | { readonly transaction: string; readonly accountKeys?: undefined; readonly computeUnits?: undefined }
  | { readonly transaction?: undefined; readonly accountKeys: readonly string[]; readonly computeUnits: number }
) & {
  /** 0.01–0.99. */
  readonly probability: number;
  /** 1–150. */
  readonly withinSlots: number;
  /** Advise a bundle's tip instead of a priority fee. */
  readonly bundle?: boolean;
};

export interface RouteEstimate {
  readonly microLamportsPerComputeUnit: number;
  readonly tipLamports?: number;
  /** The chance of landing within `withinSlots` at that price: at least the one asked for when `reachable`. */
  readonly probability: number;
  readonly reachable: boolean;
  readonly outcomes: number;
}

/** The advice, with what it rests on. */
export interface LandingEstimate extends RouteEstimate {
  readonly withinSlots: number;
  /** The fee this transaction pays at that price: signatures and priority (lamports), and the tip for a bundle. */
  readonly feeLamports: number;
  readonly byRoute: Record<string, RouteEstimate>;
  readonly evidence: {
    /** Outcomes known within `withinSlots`, and how many of them landed. */
    readonly outcomes: number;
    readonly landedWithin: number;
    readonly windowSeconds: number;
    /** The pseudo-outcomes of the prior (the market's own percentiles) the outcomes are blended with: 20 until 50 outcomes are known, then 0. */
    readonly priorWeight: number;
    /** Where the advice stands in the market (0..1 among what landed; below 0, under the lowest by that share of it). */
    readonly marketRank: number;
    /** The scheduling priority advised (Agave's: lamports the leader keeps × 1,000,000 / (cost + 1)); 0 for bundles. */
    readonly priority: number;
    /** The transaction's cost to the block and its compute-unit limit, once it sets a price: what the price for that priority turns on. */
    readonly cost: number;
    readonly computeUnits: number;
    /** The landed transactions' priorities (bundles: tips, lamports) of the last `slots` blocks. */
    readonly market: {
      readonly slots: number;
      readonly samples: number;
      readonly percentiles: Record<'p25' | 'p50' | 'p75' | 'p90' | 'p95' | 'p99', number> | null;
    };
    /** Real outcomes near the advised rank: none (the market's percentile alone), low (< 30), medium (< 100), high. */
    readonly confidence: 'none' | 'low' | 'medium' | 'high';
    readonly nearbyOutcomes: number;
  };
}
