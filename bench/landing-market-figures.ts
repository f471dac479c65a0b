/**
 * The landing benchmark's figures from what each sender sent and what each slot held: landed
 * %, slots to land, fees, overpayment, calibration, and the issue's targets. No I/O.
 */
import type { SlotLanded } from './landing-blocks';
import { median, percentile } from './median';
import type { Calibration, LandingMarketStatistics, LoadFigures, Ratio, SenderFigures, TargetCheck } from './landing-market-shapes';
import { feePaid, type UserSent, type UserSender } from './landing-senders';

/** The load the targets are set at, and the targets (the issue's). */
export const TARGET_LOAD = 2;
export const TARGETS = {
  advisedWithinPct: 85,
  /** (a)'s share not landed within the slots, at most this times (b)'s. */
  missShareVsPlain: 0.5,
  advisedOverpayment: 1.5,
  calibrationErrorPts: 10,
  calibrationSamplesPerDecile: 100,
} as const;

/** Transactions not landed within the slots, shown each (the first of them), so that a miss can be explained. */
const LATE_SAMPLES = 8;
const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;
const pct = (part: number, whole: number) => (whole === 0 ? 0 : round((100 * part) / whole, 2));
const within = (entry: UserSent, slots: number) => entry.landedSlot !== undefined && entry.landedSlot - entry.slot <= slots;

/** A median of ratios that may hold Infinity (price over a lowest landed price of 0). */
function medianRatio(ratios: number[]): Ratio {
  if (ratios.length === 0) return null;
  const m = median(ratios);
  return Number.isFinite(m) ? round(m, 3) : 'unbounded';
}

export function senderFigures(
  sender: UserSender,
  description: string,
  slots: ReadonlyMap<number, SlotLanded>,
  withinSlots: number,
): SenderFigures {
  const { sent } = sender;
  const landed = sent.filter((entry) => entry.landedSlot !== undefined);
  const deltas = landed.map((entry) => entry.landedSlot! - entry.slot).sort((a, b) => a - b);
  const refusals: Record<string, number> = {};
  for (const entry of sent) {
    if (entry.accepted === true) continue;
    const why = entry.refusal ?? 'no answer';
    if (why in refusals || Object.keys(refusals).length < 5) refusals[why] = (refusals[why] ?? 0) + 1;
  }
  const ratios: number[] = [];
  const priceRatios: number[] = [];
  let lowestFree = 0;
  let slotUnread = 0;
  for (const entry of landed) {
    if (entry.tip > 0 || entry.failed === true) continue;
    const slot = slots.get(entry.landedSlot!);
    if (slot === undefined || slot.lowestPrice === null || slot.lowestPriority === null) {
      slotUnread += 1;
      continue;
    }
    if (slot.lowestPrice === 0) lowestFree += 1;
    ratios.push(entry.priority / slot.lowestPriority);
    priceRatios.push(slot.lowestPrice === 0 ? (entry.price === 0 ? 1 : Infinity) : entry.price / slot.lowestPrice);
  }
  const fees = landed.map(feePaid);
  const advice = sent.map((entry) => Math.round(entry.adviceMs)).sort((a, b) => a - b);
  const answers = sent.map((entry) => Math.round(entry.answerMs ?? Infinity)).sort((a, b) => a - b);
  const hot = sent.filter((entry) => entry.hot);
  return {
    sender: sender.name,
    description,
    sent: sent.length,
    accepted: sent.filter((entry) => entry.accepted === true).length,
    landed: landed.length,
    landedPct: pct(landed.length, sent.length),
    landedWithinPct: pct(sent.filter((entry) => within(entry, withinSlots)).length, sent.length),
    failedOnChain: landed.filter((entry) => entry.failed === true).length,
    expired: sent.filter((entry) => entry.expired === true).length,
    unresolved: sent.filter((entry) => entry.landedSlot === undefined && entry.expired !== true).length,
    slots: { p50: percentile(deltas, 50), p90: percentile(deltas, 90), p99: percentile(deltas, 99) },
    answerMs: { p50: percentile(answers, 50), p99: percentile(answers, 99) },
    adviceMs: { p50: percentile(advice, 50), p99: percentile(advice, 99) },
    feePerLandedLamports: fees.length === 0 ? null : Math.round(fees.reduce((a, b) => a + b, 0) / fees.length),
    priceMedian: landed.length === 0 ? null : median(landed.map((entry) => entry.price)),
    overpayment: {
      medianRatio: medianRatio(ratios),
      priceMedianRatio: medianRatio(priceRatios),
      samples: ratios.length,
      lowestFree,
      slotUnread,
    },
    hot: { sent: hot.length, landedWithinPct: pct(hot.filter((entry) => within(entry, withinSlots)).length, hot.length) },
    refusals,
    adviceFailures: { ...sender.adviceFailures },
    late: sent
      .filter((entry) => !within(entry, withinSlots))
      .slice(0, LATE_SAMPLES)
      .map((entry) => {
        const next = Array.from({ length: withinSlots }, (_, i) => slots.get(entry.slot + 1 + i)?.lowestPrice).filter(
          (price): price is number => typeof price === 'number',
        );
        return {
          slot: entry.slot,
          landedSlot: entry.landedSlot ?? null,
          price: entry.price,
          hot: entry.hot,
          lowestLandedPriceNext: next.length === 0 ? null : Math.min(...next),
          answerMs: entry.answerMs === undefined ? null : Math.round(entry.answerMs),
          refusal: entry.refusal ?? null,
        };
      }),
  };
}

/**
 * (a)'s median scheduling priority over the median lowest priority that landed in the slots its
 * transactions landed in (the issue's overpayment: "against the lowest priority that landed"),
 * and the same of prices.
 */
export function advisedOverpayment(sender: UserSender, slots: ReadonlyMap<number, SlotLanded>): { priority: Ratio; price: Ratio } {
  const landed = sender.sent.filter((entry) => entry.landedSlot !== undefined && entry.failed !== true && entry.tip === 0);
  const read = landed.filter((entry) => typeof slots.get(entry.landedSlot!)?.lowestPriority === 'number');
  if (read.length === 0) return { priority: null, price: null };
  const ratioOf = (paid: number, base: number): Ratio => (base === 0 ? (paid === 0 ? 1 : 'unbounded') : round(paid / base, 3));
  return {
    priority: ratioOf(median(read.map((e) => e.priority)), median(read.map((e) => slots.get(e.landedSlot!)!.lowestPriority!))),
    price: ratioOf(median(read.map((e) => e.price)), median(read.map((e) => slots.get(e.landedSlot!)!.lowestPrice!))),
  };
}

/**
 * Calibration counted by the benchmark: transactions sent at advice for a probability, in
 * deciles of that probability; observed = the share that landed within `withinSlots`.
 */
export function clientCalibration(entries: readonly UserSent[], withinSlots: number): Calibration {
  const advised = entries.filter((entry) => entry.probability !== null && entry.accepted === true);
  const deciles = Array.from({ length: 10 }, (_, i) => {
    const from = i / 10;
    const to = (i + 1) / 10;
    const members = advised.filter(
      (entry) => entry.probability! >= from && (entry.probability! < to || (i === 9 && entry.probability! <= 1)),
    );
    const predicted = members.length === 0 ? 0 : members.reduce((sum, entry) => sum + entry.probability!, 0) / members.length;
    const observed = members.length === 0 ? 0 : members.filter((entry) => within(entry, withinSlots)).length / members.length;
    return { from, to, predicted: round(predicted, 4), observed: round(observed, 4), samples: members.length };
  });
  const brier =
    advised.length === 0
      ? null
      : round(
          advised.reduce((sum, entry) => sum + (entry.probability! - (within(entry, withinSlots) ? 1 : 0)) ** 2, 0) / advised.length,
          4,
        );
  return { withinSlots, deciles, brier, samples: advised.length };
}

/** The larger of the gateway's and the senders' largest calibration errors, or null when neither has a decile with enough samples. */
export function worstCalibrationError(figures: LoadFigures): number | null {
  const errors = [calibrationMaxErrorPts(figures.calibration.gateway), calibrationMaxErrorPts(figures.calibration.client)];
  const judged = errors.filter((error): error is number => error !== null);
  return judged.length === 0 ? null : Math.max(...judged);
}

/** The largest |predicted − observed| in percentage points over deciles with enough samples, or null when none has. */
export function calibrationMaxErrorPts(calibration: Calibration | null): number | null {
  if (calibration === null) return null;
  const full = calibration.deciles.filter((decile) => decile.samples >= TARGETS.calibrationSamplesPerDecile);
  if (full.length === 0) return null;
  return round(Math.max(...full.map((decile) => Math.abs(decile.predicted - decile.observed) * 100)), 2);
}

const bySender = (figures: LoadFigures, name: string) => figures.senders.find((sender) => sender.sender === name);

/** The flat headline figures, from the run at TARGET_LOAD (all null when it was not measured). */
export function landingMarketStatistics(loads: readonly LoadFigures[]): LandingMarketStatistics {
  const at = loads.find((figures) => figures.load === TARGET_LOAD);
  const overpayment = at?.advisedOverpayment;
  return {
    landing_2x_advised_within8_pct: at === undefined ? null : (bySender(at, 'advised')?.landedWithinPct ?? null),
    landing_2x_plain_within8_pct: at === undefined ? null : (bySender(at, 'plain')?.landedWithinPct ?? null),
    landing_2x_advised_overpayment: typeof overpayment === 'number' ? overpayment : null,
    landing_advice_calibration_max_error_pts: at === undefined ? null : worstCalibrationError(at),
  };
}

/** The issue's targets at TARGET_LOAD, each met, missed, or not measured (met: null), with the figures behind it. */
export function targetChecks(loads: readonly LoadFigures[]): TargetCheck[] {
  const at = loads.find((figures) => figures.load === TARGET_LOAD);
  if (at === undefined)
    return [{ name: `load ${TARGET_LOAD}`, met: null, detail: `not measured: the run did not include load ${TARGET_LOAD}` }];
  const checks: TargetCheck[] = [];
  const fallback = at.adviceSource.startsWith('getLandingEstimate') ? '' : ` (advice from ${at.adviceSource})`;
  const advised = bySender(at, 'advised');
  const plain = bySender(at, 'plain');
  if (advised !== undefined) {
    checks.push({
      name: `(a) lands ≥ ${TARGETS.advisedWithinPct} % within ${'8'} slots`,
      met: advised.landedWithinPct >= TARGETS.advisedWithinPct,
      detail: `${advised.landedWithinPct} %${fallback}`,
    });
  }
  if (advised !== undefined && plain !== undefined) {
    const missA = 100 - advised.landedWithinPct;
    const missB = 100 - plain.landedWithinPct;
    checks.push({
      name: `(a) misses at most ${TARGETS.missShareVsPlain}× what (b) misses`,
      met: missA <= TARGETS.missShareVsPlain * missB,
      detail: `(a) missed ${round(missA, 2)} %, (b) ${round(missB, 2)} %`,
    });
  }
  const overpayment = at.advisedOverpayment;
  checks.push({
    name: `(a) pays ≤ ${TARGETS.advisedOverpayment}× the median lowest priority that landed in its slots`,
    met: typeof overpayment === 'number' ? overpayment <= TARGETS.advisedOverpayment : overpayment === null ? null : false,
    detail: overpayment === null ? 'nothing landed to compare' : `${overpayment}×`,
  });
  // Both views: the gateway's (each transaction scored at the rank it was sent at) and the senders' (the chance the
  // advice answered against what landed), which is what a user of the advice sees.
  const views = [
    { name: "the gateway's", calibration: at.calibration.gateway },
    { name: "the senders'", calibration: at.calibration.client },
  ];
  const errors = views.map((view) => calibrationMaxErrorPts(view.calibration));
  const judged = errors.filter((error): error is number => error !== null);
  const described = views.map((view, i) => {
    if (view.calibration === null) return `${view.name}: none (${at.calibration.gatewayNote ?? 'not reported'})`;
    const short = view.calibration.deciles.filter((decile) => decile.samples < TARGETS.calibrationSamplesPerDecile).length;
    return `${view.name}: ${errors[i] === null ? 'no decile with enough samples' : `largest error ${errors[i]} points`} (${short} of 10 deciles under ${TARGETS.calibrationSamplesPerDecile} samples, not judged)`;
  });
  checks.push({
    name: `calibration within ${TARGETS.calibrationErrorPts} points in each decile of ≥ ${TARGETS.calibrationSamplesPerDecile} samples`,
    // Judged on the deciles that have the samples, as the figure is; no view having any is a miss.
    met: judged.length > 0 && Math.max(...judged) <= TARGETS.calibrationErrorPts,
    detail: described.join('; '),
  });
  return checks;
}
