/** What `npm run bench:landing` measures (landing-market.ts), as bench/results/latest.json keeps it under `landing.market`. */
import type { CpuShares } from './proc-cpu';

/** A median ratio that may be unbounded: a price over a lowest landed price of 0. */
export type Ratio = number | 'unbounded' | null;

export interface SenderFigures {
  /** A SenderName in bench:landing; a strategy's name in bench:strategy. */
  readonly sender: string;
  readonly description: string;
  /** Signed and handed to the route (transactions whose advice could not be had are not). */
  readonly sent: number;
  /** Answered with the transaction's signature. */
  readonly accepted: number;
  /** Included in a slot, successfully or not. */
  readonly landed: number;
  readonly landedPct: number;
  /** Landed at most `withinSlots` slots after the cluster's slot read just before sending. */
  readonly landedWithinPct: number;
  readonly failedOnChain: number;
  /** Not landed, and its blockhash expired: it never will. */
  readonly expired: number;
  /** Not landed when the wait ended, its blockhash still valid. */
  readonly unresolved: number;
  /** Landed slot − the cluster's slot read just before sending, over the landed: nearest rank. */
  readonly slots: { readonly p50: number | null; readonly p90: number | null; readonly p99: number | null };
  /** The route's answer to the send, as the sender saw it (ms, nearest rank). */
  readonly answerMs: { readonly p50: number | null; readonly p99: number | null };
  /** The time to have the price (the advice's answer), before the slot is read and the transaction sent (ms, nearest rank). */
  readonly adviceMs: { readonly p50: number | null; readonly p99: number | null };
  /** Mean lamports a landed transaction paid: 5,000 + ceil(price × unit limit / 10⁶) + tip. */
  readonly feePerLandedLamports: number | null;
  /** Median price (micro-lamports per unit) of the landed ones. */
  readonly priceMedian: number | null;
  /**
   * Median over the landed (untipped) of its scheduling priority / the lowest priority that
   * landed in the same slot (Agave's: what the leader keeps × 10⁶ / (cost + 1)); the same of
   * prices in `priceMedianRatio` (`unbounded` when that lowest price was 0 for most).
   * `lowestFree`: how many landed in a slot whose lowest landed price was 0; `slotUnread`: how
   * many landed in a slot whose block was not read.
   */
  readonly overpayment: {
    readonly medianRatio: Ratio;
    readonly priceMedianRatio: Ratio;
    readonly samples: number;
    readonly lowestFree: number;
    readonly slotUnread: number;
  };
  /** The hot-account transactions alone (every third). */
  readonly hot: { readonly sent: number; readonly landedWithinPct: number };
  readonly refusals: Record<string, number>;
  readonly adviceFailures: Record<string, number>;
  /**
   * The first few not landed within the slots: sent at `slot`, landed at `landedSlot` (null:
   * never), at `price`, against the lowest price that landed in any of the slots after it
   * (`lowestLandedPriceNext`: what would have sufficed there, at best).
   */
  readonly late: readonly {
    readonly slot: number;
    readonly landedSlot: number | null;
    readonly price: number;
    readonly hot: boolean;
    readonly lowestLandedPriceNext: number | null;
    readonly answerMs: number | null;
    readonly refusal: string | null;
  }[];
}

export interface CalibrationDecile {
  readonly from: number;
  readonly to: number;
  /** The mean probability advised for the transactions in the decile. */
  readonly predicted: number;
  /** The share of them that landed within the slots asked. */
  readonly observed: number;
  readonly samples: number;
}

/** The shape of getLandingReport's `calibration`, and of the benchmark's own count. */
export interface Calibration {
  readonly withinSlots: number;
  readonly deciles: readonly CalibrationDecile[];
  readonly brier: number | null;
  readonly samples: number;
}

export interface LoadFigures {
  /** The market's load, in block capacities. */
  readonly load: number;
  readonly blockUnits: number;
  readonly sendSeconds: number;
  readonly waitedSeconds: number;
  readonly senders: readonly SenderFigures[];
  /** (a)'s median priority over the median lowest landed priority in the slots its transactions landed in (the target's), and the same of prices. */
  readonly advisedOverpayment: Ratio;
  readonly advisedPriceRatio: Ratio;
  /** Where (a)'s and (d)'s prices came from: getLandingEstimate, or the fallback named. */
  readonly adviceSource: string;
  /** The tip (c) paid: the tip floor's 50th percentile, and where it came from. */
  readonly tipFloor: { readonly lamportsMedian: number | null; readonly source: string };
  readonly calibration: {
    /** The gateway's own (getLandingReport's `calibration`), or null with why. */
    readonly gateway: Calibration | null;
    readonly gatewayNote: string | null;
    /** Counted by the benchmark: the probability each advice answered, against landing within the slots from its own slot reading. */
    readonly client: Calibration;
  };
  /** Slots whose blocks were read (for the lowest landed price), and those that could not be. */
  readonly blocks: {
    readonly read: number;
    readonly unread: number;
    /** Of the blocks of the slots sent in, the share whose units reached 99 % of the limit (the cluster's own count); null off the local cluster. */
    readonly fullPct: number | null;
  };
  /** The market's seed and the burst it starts (landing-weather.ts), the slots the sending spanned, and where the blocks showed the burst. */
  readonly weather: {
    readonly seed: number;
    readonly burst: { readonly start: number; readonly slots: number };
    readonly sentSlots: { readonly from: number; readonly to: number };
    readonly seen: string;
  };
  /** CPU while sending, % of one core: each process, the whole machine (others' work included), what the host stole. */
  readonly cpu: CpuShares<'all' | 'jito' | 'tpu'>;
}

export interface TargetCheck {
  readonly name: string;
  readonly met: boolean | null;
  readonly detail: string;
}

export interface LandingMarket {
  readonly commit: string;
  readonly uncommittedChanges: boolean;
  readonly at: string;
  readonly mode: 'quick' | 'default';
  readonly slotMs: number;
  readonly withinSlots: number;
  /** The probability (a) asks advice for. */
  readonly probability: number;
  readonly loads: readonly LoadFigures[];
  /** The targets at load 2, each met, missed, or not measured (null). */
  readonly targets: readonly TargetCheck[];
}

/** The headline figures under their flat names at the top of latest.json. */
export interface LandingMarketStatistics {
  readonly landing_2x_advised_within8_pct: number | null;
  readonly landing_2x_plain_within8_pct: number | null;
  readonly landing_2x_advised_overpayment: number | null;
  readonly landing_advice_calibration_max_error_pts: number | null;
}
