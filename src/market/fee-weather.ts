/**
 * What the local cluster's other senders pay, slot by slot: a documented distribution
 * (docs/LEDGER.md, The market), seeded so that a run can be repeated. No I/O, no clock: the
 * market moves it on once a slot and draws from it once a transaction.
 *
 * - **Priority fee** (micro-lamports per compute unit): log-normal around a median that
 *   drifts (a mean-reverting random walk of its logarithm around MEDIAN_PRICE), with a heavy
 *   tail (σ 1.2, and one sender in twenty paying e² more again); one in ten pays nothing.
 * - **Bursts** (a token launch): starting in a slot with probability 1/400 and lasting 20 to
 *   60 slots; meanwhile the share of traffic writing the hot account rises from 15 % to 60 %,
 *   and those transactions pay 20 times as much.
 * - **Tips** (lamports, for bundles): log-normal around 10,000 (σ 1), ten times that in a burst,
 *   never under the block engine's minimum of 1,000.
 */

/** The median priority fee the drift returns to (micro-lamports per compute unit). */
export const MEDIAN_PRICE = 5_000;
const DRIFT_PULL = 0.02;
const DRIFT_STEP = 0.05;
const PRICE_SIGMA = 1.2;
const WHALE_SHARE = 0.05;
const FREE_SHARE = 0.1;
const HOT_SHARE = 0.15;
const BURST_HOT_SHARE = 0.6;
const BURST_FEE_FACTOR = 20;
const BURST_CHANCE = 1 / 400;
const BURST_SLOTS = [20, 60] as const;
const MEDIAN_TIP = 10_000;
const MIN_TIP = 1_000;

export interface Draw {
  /** Micro-lamports per compute unit. */
  readonly price: number;
  /** Whether it writes the hot account. */
  readonly hot: boolean;
}

export class FeeWeather {
  private state: number;
  private logMedian = Math.log(MEDIAN_PRICE);
  private burstLeft = 0;

  constructor(seed = 1) {
    this.state = seed >>> 0 || 1;
  }

  /** The median price of the current slot. */
  get median(): number {
    return Math.exp(this.logMedian);
  }

  get bursting(): boolean {
    return this.burstLeft > 0;
  }

  /** A slot passes: the median drifts; a burst may start or end. */
  nextSlot(): void {
    this.logMedian += DRIFT_PULL * (Math.log(MEDIAN_PRICE) - this.logMedian) + DRIFT_STEP * this.gaussian();
    if (this.burstLeft > 0) this.burstLeft -= 1;
    else if (this.uniform() < BURST_CHANCE)
      this.burstLeft = BURST_SLOTS[0] + Math.floor(this.uniform() * (BURST_SLOTS[1] - BURST_SLOTS[0] + 1));
  }

  /** One transaction's price and whether it writes the hot account. */
  draw(): Draw {
    const hot = this.uniform() < (this.bursting ? BURST_HOT_SHARE : HOT_SHARE);
    if (this.uniform() < FREE_SHARE) return { price: 0, hot };
    let log = this.logMedian + PRICE_SIGMA * this.gaussian();
    if (this.uniform() < WHALE_SHARE) log += 2;
    if (hot && this.bursting) log += Math.log(BURST_FEE_FACTOR);
    return { price: Math.round(Math.exp(log)), hot };
  }

  /** One bundle's tip, in lamports. */
  tip(): number {
    const median = this.bursting ? MEDIAN_TIP * 10 : MEDIAN_TIP;
    return Math.max(MIN_TIP, Math.round(median * Math.exp(this.gaussian())));
  }

  /** A uniform draw in [0, 1) (mulberry32). */
  uniform(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** A standard normal draw (Box-Muller). */
  private gaussian(): number {
    const u = Math.max(this.uniform(), Number.EPSILON);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.uniform());
  }
}
