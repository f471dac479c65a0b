/**
 * The chance of landing within k slots as a function of where a transaction's price stood in
 * the market when it was sent (its rank, 0 the cheapest of what landed around it, 1 the
 * dearest, below 0 under the cheapest; market-ranks.ts), learnt from outcomes. No I/O.
 *
 * The curve is an isotonic regression (pool adjacent violators): the most likely
 * non-decreasing curve through the outcomes, each counted by its weight (the caller's: how
 * recent it is), assuming only that paying more never lowers the chance. Outcomes at one rank
 * are pooled first. Until PRIOR_UNTIL outcomes are known a prior joins them as PRIOR_WEIGHT
 * pseudo-outcomes spread over the ranks, each landing with a chance equal to its rank: with no
 * outcomes the advice for a chance p is the market's p-th percentile. From then on the
 * outcomes alone decide: a pseudo-outcome below every real one is never pooled with them, so
 * kept it would hold the curve at its own chance there however many outcomes said otherwise
 * (with all of them landing, advice for 5 % stayed at the market's 5th percentile and was
 * predicted 5 %). The curve is flat across the ranks of each pooled block's outcomes (the
 * regression's own step), linear across the gap between one block's highest rank and the
 * next one's lowest, and flat past the first and last: the advice moves smoothly with p, and
 * a transaction sent at the advised rank is predicted the chance asked for. Drawn instead
 * between the blocks' mean ranks, a sharp rise near the bottom of the market (half landing
 * below rank 0.1, all above it) was spread over the ranks up to the next block's middle:
 * advice for 85 % went to about rank 0.4, where all landed (bench:landing measured the
 * gateway 15 points under-confident in its 80–90 % decile).
 */

/** An outcome as the curve reads it: its rank when sent, whether it landed within the slots asked, and how much it counts (1 when not said). */
export interface RankedOutcome {
  readonly rank: number;
  readonly landed: boolean;
  readonly weight?: number;
}

/** The pseudo-outcomes of the prior, in all, and the outcomes from which it is left out. */
export const PRIOR_WEIGHT = 20;
export const PRIOR_UNTIL = 50;
const PRIOR_POINTS = 20;

export interface CurvePoint {
  /** The mean rank of the block's outcomes. */
  readonly rank: number;
  /** The lowest and highest rank of its outcomes (pseudo-outcomes' included): the curve is flat between them. */
  readonly from: number;
  readonly to: number;
  readonly probability: number;
  /** Real outcomes pooled in this block (pseudo-outcomes not counted). */
  readonly outcomes: number;
}

export interface LandingCurve {
  /** Ascending in rank and in probability. */
  readonly points: readonly CurvePoint[];
  /** Real outcomes it rests on. */
  readonly outcomes: number;
  /** The prior's pseudo-outcomes in it (PRIOR_WEIGHT, or 0 from PRIOR_UNTIL outcomes on). */
  readonly priorWeight: number;
}

interface Block {
  weight: number;
  sum: number;
  rankSum: number;
  outcomes: number;
  from: number;
  to: number;
}

/** `below` and `above` as one block (`below` the lower in rank). */
const pool = (below: Block, above: Block): Block => ({
  weight: below.weight + above.weight,
  sum: below.sum + above.sum,
  rankSum: below.rankSum + above.rankSum,
  outcomes: below.outcomes + above.outcomes,
  from: below.from,
  to: above.to,
});

/** The curve through `outcomes` (and the prior). */
export function fitCurve(outcomes: readonly RankedOutcome[]): LandingCurve {
  const items: Block[] = outcomes.map(({ rank, landed, weight = 1 }) => ({
    weight,
    sum: landed ? weight : 0,
    rankSum: rank * weight,
    outcomes: 1,
    from: rank,
    to: rank,
  }));
  const priorWeight = outcomes.length < PRIOR_UNTIL ? PRIOR_WEIGHT : 0;
  const pseudo = priorWeight / PRIOR_POINTS;
  for (let i = 0; i < (priorWeight === 0 ? 0 : PRIOR_POINTS); i++) {
    const rank = (i + 0.5) / PRIOR_POINTS;
    items.push({ weight: pseudo, sum: pseudo * rank, rankSum: pseudo * rank, outcomes: 0, from: rank, to: rank });
  }
  items.sort((a, b) => a.rankSum / a.weight - b.rankSum / b.weight);
  // Outcomes at one rank are one observation of the chance there, pooled before the regression:
  // prices come in whole lamports, so many share a rank, and left in the order they came, the
  // misses before the landings would make a step at that rank and the curve read the misses.
  const atRanks: Block[] = [];
  for (const item of items) {
    const last = atRanks[atRanks.length - 1];
    if (last !== undefined && last.from === item.from) atRanks[atRanks.length - 1] = pool(last, item);
    else atRanks.push({ ...item });
  }
  const stack: Block[] = [];
  for (const item of atRanks) {
    let block = { ...item };
    while (stack.length > 0 && stack[stack.length - 1]!.sum / stack[stack.length - 1]!.weight >= block.sum / block.weight) {
      block = pool(stack.pop()!, block);
    }
    stack.push(block);
  }
  return {
    points: stack.map((b) => ({ rank: b.rankSum / b.weight, from: b.from, to: b.to, probability: b.sum / b.weight, outcomes: b.outcomes })),
    outcomes: outcomes.length,
    priorWeight,
  };
}

/** The chance the curve gives a transaction sent at `rank`. */
export function probabilityAt(curve: LandingCurve, rank: number): number {
  const { points } = curve;
  if (rank <= points[0]!.to) return points[0]!.probability;
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1]!, points[i]!];
    if (rank < b.from) return a.probability + ((rank - a.to) / (b.from - a.to)) * (b.probability - a.probability);
    if (rank <= b.to) return b.probability;
  }
  return points[points.length - 1]!.probability;
}

export interface RankAdvice {
  /** The lowest rank the curve gives the chance asked for (at most 0 when its lowest outcomes reach it), or 1 when none does. */
  readonly rank: number;
  /** The chance at that rank: the one asked for, or the best the curve offers when it is lower. */
  readonly probability: number;
  /** Whether some rank reaches the chance asked for. */
  readonly reachable: boolean;
  /** Real outcomes in the blocks around that rank. */
  readonly nearbyOutcomes: number;
}

/** The lowest rank at which the curve reaches `probability`. */
export function rankFor(curve: LandingCurve, probability: number): RankAdvice {
  const { points } = curve;
  const first = points[0]!;
  // The lowest rank the outcomes support: the cheapest that landed, or lower where outcomes under it landed.
  if (first.probability >= probability)
    return { rank: Math.min(0, first.from), probability: first.probability, reachable: true, nearbyOutcomes: first.outcomes };
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1]!, points[i]!];
    if (b.probability >= probability) {
      const rank = a.to + ((probability - a.probability) / (b.probability - a.probability)) * (b.from - a.to);
      return { rank, probability, reachable: true, nearbyOutcomes: a.outcomes + b.outcomes };
    }
  }
  const last = points[points.length - 1]!;
  return { rank: 1, probability: last.probability, reachable: false, nearbyOutcomes: last.outcomes };
}
