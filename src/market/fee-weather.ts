/**
 * What the local cluster's other senders pay, slot by slot: a documented distribution
 * (docs/LEDGER.md, The market), seeded so that a run can be repeated. No I/O, no clock: the
 * market moves it on once a slot and draws from it once a transaction.
 *
 * The slots' weather (the median's drift, the bursts) comes from a random stream of its own,
 * apart from the transactions' draws: with one seed, a burst begins in the same slot at every
 * load, however many transactions each slot draws for, so loads are compared in one weather
 * and a benchmark can choose a seed whose burst falls where it measures (burstsOf).
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

/** A seeded stream of uniform and normal draws (mulberry32, Box-Muller). */
class Stream {
  constructor(private state: number) {}

  /** A uniform draw in [0, 1). */
  uniform(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** A standard normal draw. */
  gaussian(): number {
    const u = Math.max(this.uniform(), Number.EPSILON);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.uniform());
  }
}

/** The transactions' stream starts this far from the slots' (any odd constant keeps the two apart). */
const DRAWS_OFFSET = 0x9e3779b9;

export class FeeWeather {
  private readonly slots: Stream;
  private readonly draws: Stream;
  private logMedian = Math.log(MEDIAN_PRICE);
  private burstLeft = 0;

  constructor(seed = 1) {
    const state = seed >>> 0 || 1;
    this.slots = new Stream(state);
    this.draws = new Stream((state ^ DRAWS_OFFSET) >>> 0);
  }

  /** The median price of the current slot. */
  get median(): number {
    return Math.exp(this.logMedian);
  }

  get bursting(): boolean {
    return this.burstLeft > 0;
  }

  /** The slots the current burst still lasts, this one included (0 outside a burst). */
  get burstSlotsLeft(): number {
    return this.burstLeft;
  }

  /** A slot passes: the median drifts; a burst may start or end. */
  nextSlot(): void {
    this.logMedian += DRIFT_PULL * (Math.log(MEDIAN_PRICE) - this.logMedian) + DRIFT_STEP * this.slots.gaussian();
    if (this.burstLeft > 0) this.burstLeft -= 1;
    else if (this.slots.uniform() < BURST_CHANCE)
      this.burstLeft = BURST_SLOTS[0] + Math.floor(this.slots.uniform() * (BURST_SLOTS[1] - BURST_SLOTS[0] + 1));
  }

  /** One transaction's price and whether it writes the hot account. */
  draw(): Draw {
    const hot = this.uniform() < (this.bursting ? BURST_HOT_SHARE : HOT_SHARE);
    if (this.uniform() < FREE_SHARE) return { price: 0, hot };
    let log = this.logMedian + PRICE_SIGMA * this.draws.gaussian();
    if (this.uniform() < WHALE_SHARE) log += 2;
    if (hot && this.bursting) log += Math.log(BURST_FEE_FACTOR);
    return { price: Math.round(Math.exp(log)), hot };
  }

  /** One bundle's tip, in lamports. */
  tip(): number {
    const median = this.bursting ? MEDIAN_TIP * 10 : MEDIAN_TIP;
    return Math.max(MIN_TIP, Math.round(median * Math.exp(this.draws.gaussian())));
  }

  /** A uniform draw in [0, 1) from the transactions' stream (the market's choice of path). */
  uniform(): number {
    return this.draws.uniform();
  }
}

/** The bursts of the first `slots` slots of the weather of `seed`: the slot each begins (1 the first) and its length. */
export function burstsOf(seed: number, slots: number): { start: number; slots: number }[] {
  const weather = new FeeWeather(seed);
  const bursts: { start: number; slots: number }[] = [];
  for (let slot = 1; slot <= slots; slot++) {
    const was = weather.bursting;
    weather.nextSlot();
    if (weather.bursting && !was) bursts.push({ start: slot, slots: weather.burstSlotsLeft });
  }
  return bursts;
}
