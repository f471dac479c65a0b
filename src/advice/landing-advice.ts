/**
 * `getLandingEstimate`, Slipway's own: the priority fee (or a bundle's tip) that lands a
 * transaction within k slots with the chance asked for, learnt from Slipway's own outcomes.
 *
 * While advice is asked for (and ACTIVE_MS after), it follows, every FOLLOW_MS: a snapshot
 * of the market (the prices and tips that landed in the last blocks, read through the reads
 * route by recent-fees.ts), and the journal's outcomes of the last OUTCOME_WINDOW_MS (any
 * gateway's, so a cluster learns from all), each ranked in the snapshot of the moment it was
 * received. An estimate fits the chance of landing within k against that rank
 * (landing-curve.ts), takes the lowest rank that reaches the chance asked for, and answers
 * the price at that rank in the market of now. Outcomes are ranked rather than priced so
 * that what was learnt holds as the market moves.
 *
 * Each outcome is also scored once against the curve for CALIBRATION_SLOTS in force when it
 * was received (calibration.ts): the landing report's calibration.
 */
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import type { OutcomeQuery, TransactionOutcome } from '../stores/journal';
import { AdviceScores } from './advice-scores';
import type { LandingReport } from '../core/landing-report';
import { lowestLanded, type SlotFees } from './block-fees';
import { CALIBRATION_SLOTS } from '../reports/calibration-statistics';
import { followedOf, landedWithin, type Followed } from './followed-outcomes';
import { fitCurve, probabilityAt, rankFor, type LandingCurve } from './landing-curve';
import { parseLandingEstimateRequest, type LandingEstimateRequest } from './landing-estimate-request';
import { priceAt, priorityForRank, snapshotOf, transactionRank, RANK_SLOTS, type MarketSnapshot } from './market-ranks';
import { priceForPriority, priorityAtPrice } from './priority-price';
import { MAX_LOOKBACK_SLOTS, type RecentFees } from './recent-fees';
import { MIN_TIP_LAMPORTS } from '../leader/block-auction';
import type { LandingEstimate, RouteEstimate } from '../core/landing-estimate';

const FOLLOW_MS = 1_000;
const ACTIVE_MS = 10 * 60_000;
const OUTCOME_WINDOW_MS = 10 * 60_000;
/**
 * An outcome counts half as much for each HALF_LIFE_MS since it was received: the market
 * changes its regime (a token launch on one account, then calm again), and a curve that
 * weighs ten minutes alike carries a burst's misses into the calm after it (bench:landing
 * measured it under-confident there, 84 % answered where all landed) and the calm into the
 * next burst.
 */
const HALF_LIFE_MS = 60_000;
const MAX_OUTCOMES = 20_000;
/** A route is advised for on its own once this many of its outcomes are known. */
const ROUTE_MIN_OUTCOMES = 30;
const DEFAULT_SLOT_MS = 400;

export class LandingAdvice {
  private readonly snapshots: MarketSnapshot[] = [];
  private readonly known = new Map<string, Followed>();
  private followed: Followed[] = [];
  private readonly curves = new Map<string, LandingCurve>();
  /** The calibration curve of each follow, oldest first: an outcome is scored with the one in force when it was received. */
  private readonly calibrationCurves: { atMs: number; curve: LandingCurve }[] = [];
  private readonly scored = new Set<string>();
  private readonly feesSeen = new Set<string>();
  private readonly scores = new AdviceScores();
  private activeUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private following: Promise<void> | undefined;

  constructor(
    private readonly recent: RecentFees,
    private readonly outcomes: (query: OutcomeQuery) => Promise<TransactionOutcome[]>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The answer to `params`, a refusal naming what is wrong, or a throw when the market cannot be read. */
  async estimate(params: readonly unknown[]): Promise<Result<LandingEstimate>> {
    const request = parseLandingEstimateRequest(params);
    if (typeof request === 'string') return fail(slipwayError('INVALID_PARAMS', request));
    this.activate();
    if (this.snapshots.length === 0) await this.follow();
    return ok(this.answer(request));
  }

  /** The calibration and fees of the outcomes received since `sinceMs` (one key's when given); empty while no advice was asked for. */
  figures(sinceMs: number, keyId?: string): Pick<LandingReport, 'calibration' | 'fees'> {
    return this.scores.figures(sinceMs, this.now(), keyId);
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private activate(): void {
    this.activeUntil = this.now() + ACTIVE_MS;
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.now() > this.activeUntil) return this.close();
      this.follow().catch(() => {}); // a failed read is tried again on the next tick; estimates answer from what is kept
    }, FOLLOW_MS);
    this.timer.unref();
  }

  /** One step of following: a market snapshot, the outcomes, the calibration. */
  follow(): Promise<void> {
    this.following ??= this.followOnce().finally(() => (this.following = undefined));
    return this.following;
  }

  private async followOnce(): Promise<void> {
    const now = this.now();
    const window = await this.recent.fresh(MAX_LOOKBACK_SLOTS);
    this.snapshots.push(snapshotOf(window, now));
    while (this.snapshots.length > 1 && this.snapshots[0]!.atMs < now - OUTCOME_WINDOW_MS) this.snapshots.shift();
    const rows = await this.outcomes({ sinceMs: now - OUTCOME_WINDOW_MS, limit: MAX_OUTCOMES });
    this.followed = followedOf(rows, this.known, (atMs) => this.snapshotAt(atMs));
    const present = new Set(this.followed.map((o) => o.signature));
    for (const signature of this.known.keys()) if (!present.has(signature)) this.known.delete(signature);
    for (const seen of [this.scored, this.feesSeen]) for (const signature of seen) if (!present.has(signature)) seen.delete(signature);
    this.curves.clear();
    this.score(now);
    this.recordFees(window);
  }

  /** What each transaction newly seen landed in a block read paid, against the lowest priority of that block. */
  private recordFees(window: readonly SlotFees[]): void {
    const lowest = new Map<number, number>();
    for (const { slot, samples } of window) {
      const least = lowestLanded(samples);
      if (least !== null) lowest.set(slot, least.priority);
    }
    for (const outcome of this.followed) {
      if (outcome.bundle || outcome.state !== 'landed' || outcome.slot === null || this.feesSeen.has(outcome.signature)) continue;
      const least = lowest.get(outcome.slot);
      if (least === undefined) continue;
      this.feesSeen.add(outcome.signature);
      this.scores.feePaid({
        keyId: outcome.keyId,
        atMs: outcome.createdAt,
        feeLamports: outcome.feeLamports,
        overpayment: least === 0 ? 1 : outcome.paid / least,
      });
    }
  }

  /** Scores the outcomes newly known within CALIBRATION_SLOTS, then keeps the curve of now for those received from now on. */
  private score(now: number): void {
    const slotMs = this.slotMs();
    for (const outcome of this.followed) {
      if (outcome.bundle || outcome.rank === null || this.scored.has(outcome.signature)) continue;
      const landed = landedWithin(outcome, CALIBRATION_SLOTS, now, slotMs);
      if (landed === null) continue;
      this.scored.add(outcome.signature);
      const inForce = this.curveInForce(outcome.createdAt);
      if (inForce !== undefined)
        this.scores.score({ keyId: outcome.keyId, atMs: outcome.createdAt, predicted: probabilityAt(inForce, outcome.rank), landed });
    }
    this.calibrationCurves.push({ atMs: now, curve: this.curve(false, null, CALIBRATION_SLOTS) });
    while (this.calibrationCurves.length > 1 && this.calibrationCurves[0]!.atMs < now - OUTCOME_WINDOW_MS) this.calibrationCurves.shift();
  }

  private curveInForce(atMs: number): LandingCurve | undefined {
    let found: LandingCurve | undefined;
    for (const { atMs: fitted, curve } of this.calibrationCurves) {
      if (fitted > atMs) break;
      found = curve;
    }
    return found;
  }

  /** The snapshot in force at `atMs`: the last taken before it, or the first when it was taken within a follow of it. */
  private snapshotAt(atMs: number): MarketSnapshot | undefined {
    let found: MarketSnapshot | undefined;
    for (const snapshot of this.snapshots) {
      if (snapshot.atMs > atMs) break;
      found = snapshot;
    }
    const first = this.snapshots[0];
    return found ?? (first !== undefined && first.atMs - atMs <= FOLLOW_MS ? first : undefined);
  }

  /** Milliseconds a slot, from the snapshots' slots and times. */
  private slotMs(): number {
    const [first, last] = [this.snapshots[0], this.snapshots[this.snapshots.length - 1]];
    if (first === undefined || last === undefined || last.slot - first.slot < 5) return DEFAULT_SLOT_MS;
    return (last.atMs - first.atMs) / (last.slot - first.slot);
  }

  /** The curve of the outcomes of one kind (and route, when given) for `slots`, fitted once per follow. */
  private curve(bundle: boolean, route: string | null, slots: number): LandingCurve {
    const id = `${bundle}\n${route}\n${slots}`;
    let curve = this.curves.get(id);
    if (curve === undefined) {
      const now = this.now();
      const slotMs = this.slotMs();
      const ranked = [];
      for (const o of this.followed) {
        if (o.bundle !== bundle || o.rank === null || (route !== null && o.route !== route)) continue;
        const landed = landedWithin(o, slots, now, slotMs);
        if (landed !== null) ranked.push({ rank: o.rank, landed, weight: 0.5 ** (Math.max(0, now - o.createdAt) / HALF_LIFE_MS) });
      }
      this.curves.set(id, (curve = fitCurve(ranked)));
    }
    return curve;
  }

  private answer(request: LandingEstimateRequest): LandingEstimate {
    const snapshot = this.snapshots[this.snapshots.length - 1]!;
    const { bundle, probability, withinSlots, shape } = request;
    const estimateOf = (curve: LandingCurve) => {
      const advice = rankFor(curve, probability);
      const tip = bundle ? Math.max(Number(MIN_TIP_LAMPORTS), snapshot.tips === null ? 0 : priceAt(snapshot.tips, advice.rank)) : undefined;
      const priority = bundle ? 0 : priorityForRank(snapshot, advice.rank, request.accounts);
      // One above the market's priority at that rank: a leader breaks ties by arrival, the later first, so a
      // transaction level with the free tenth of the market (a price of 0) could wait behind each newer one until it expired.
      const price = bundle ? 0 : priceForPriority(priority + 1, shape);
      // The chance answered is the curve's at the priority that price gives, which the fee's rounding to whole
      // lamports may put well above the rank advised: answered the chance asked for, a transfer advised 75 %
      // landed every time (bench:landing), and the gateway, scoring it at the rank it was sent at, saw no error.
      const paidRank = bundle || !advice.reachable ? null : transactionRank(snapshot, priorityAtPrice(price, shape), request.accounts);
      const chance = paidRank === null ? advice.probability : Math.max(advice.probability, probabilityAt(curve, paidRank));
      return {
        advice,
        priority,
        estimate: {
          microLamportsPerComputeUnit: price,
          ...(tip === undefined ? {} : { tipLamports: tip }),
          probability: round4(chance),
          reachable: advice.reachable,
          outcomes: curve.outcomes,
        },
      };
    };
    const overall = this.curve(bundle, null, withinSlots);
    const { advice, priority, estimate } = estimateOf(overall);
    const byRoute: Record<string, RouteEstimate> = {};
    for (const route of [...new Set(this.followed.filter((o) => o.bundle === bundle).map((o) => o.route))].sort()) {
      const curve = this.curve(bundle, route, withinSlots);
      if (curve.outcomes >= ROUTE_MIN_OUTCOMES) byRoute[route] = estimateOf(curve).estimate;
    }
    const [now, slotMs] = [this.now(), this.slotMs()];
    const landed = this.followed.filter((o) => o.bundle === bundle && o.rank !== null && landedWithin(o, withinSlots, now, slotMs));
    const priorityFee = Math.ceil((estimate.microLamportsPerComputeUnit * shape.unitLimit) / 1_000_000);
    const table = bundle ? snapshot.tips : snapshot.priorities;
    const nearby = advice.nearbyOutcomes;
    return {
      ...estimate,
      withinSlots,
      feeLamports: Number(shape.baseFee) + priorityFee + (estimate.tipLamports ?? 0),
      byRoute,
      evidence: {
        outcomes: overall.outcomes,
        landedWithin: landed.length,
        windowSeconds: OUTCOME_WINDOW_MS / 1_000,
        priorWeight: overall.priorWeight,
        marketRank: round4(advice.rank),
        priority,
        cost: shape.cost,
        computeUnits: shape.unitLimit,
        market: {
          slots: RANK_SLOTS,
          samples: bundle ? snapshot.tipSamples : snapshot.transactions,
          percentiles:
            table === null
              ? null
              : {
                  p25: priceAt(table, 0.25),
                  p50: priceAt(table, 0.5),
                  p75: priceAt(table, 0.75),
                  p90: priceAt(table, 0.9),
                  p95: priceAt(table, 0.95),
                  p99: priceAt(table, 0.99),
                },
        },
        confidence: overall.outcomes === 0 ? 'none' : nearby < 30 ? 'low' : nearby < 100 ? 'medium' : 'high',
        nearbyOutcomes: nearby,
      },
    };
  }
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
