/** The landing benchmark's table (landing-market.ts): per load and sender, landed, slots to land, fees, overpayment, calibration. */
import { fmt } from './format';
import type { Calibration, LandingMarket, Ratio } from './landing-market-shapes';

const ratio = (r: Ratio) => (r === null ? '–' : r === 'unbounded' ? '∞' : `${fmt(r, 2)}×`);
const maybe = (n: number | null, digits = 0) => (n === null ? '–' : fmt(n, digits));

function calibrationLine(name: string, calibration: Calibration): string {
  const deciles = calibration.deciles
    .filter((decile) => decile.samples > 0)
    .map((decile) => `${fmt(decile.predicted * 100)}→${fmt(decile.observed * 100)} (${decile.samples})`)
    .join(', ');
  return `    calibration, ${name} (advised % → landed % within ${calibration.withinSlots} slots (samples)): ${deciles === '' ? 'no samples' : deciles}; Brier ${maybe(calibration.brier, 3)}`;
}

/** One block of lines per load. */
export function landingMarketTable(market: Pick<LandingMarket, 'loads' | 'withinSlots'>): string {
  const lines: string[] = [];
  for (const figures of market.loads) {
    lines.push('');
    lines.push(
      `Market load ${figures.load} × ${fmt(figures.blockUnits)} units a block, ${figures.sendSeconds} s of user traffic ` +
        `(CPU, % of a core: cluster ${fmt(figures.cpu.clusterPct)}, gateways all ${fmt(figures.cpu.gatewaysPct.all)}, jito ${fmt(figures.cpu.gatewaysPct.jito)}, ` +
        `tpu ${fmt(figures.cpu.gatewaysPct.tpu)}, this client ${fmt(figures.cpu.benchPct)}; the machine ${fmt(figures.cpu.machineBusyPct)} of ${figures.cpu.cores * 100}, stolen ${fmt(figures.cpu.machineStealPct)})`,
    );
    lines.push(
      `  advice: ${figures.adviceSource}; (c)'s tip: median ${maybe(figures.tipFloor.lamportsMedian)} lamports, from ${figures.tipFloor.source}`,
    );
    lines.push(
      `  sender                       sent  landed %  ≤${market.withinSlots} slots %  slots p50  p90  p99   price p50  fee/landed  overpaid p50  hot ≤${market.withinSlots} %  answer ms p50    p99  advice ms p50    p99`,
    );
    for (const s of figures.senders) {
      lines.push(
        `  ${s.sender.padEnd(12)}${String(s.sent).padStart(17)}${fmt(s.landedPct, 1).padStart(10)}${fmt(s.landedWithinPct, 1).padStart(13)}` +
          `${maybe(s.slots.p50).padStart(11)}${maybe(s.slots.p90).padStart(5)}${maybe(s.slots.p99).padStart(5)}` +
          `${maybe(s.priceMedian).padStart(12)}${maybe(s.feePerLandedLamports).padStart(12)}${ratio(s.overpayment.medianRatio).padStart(14)}${fmt(s.hot.landedWithinPct, 1).padStart(10)}` +
          `${maybe(s.answerMs.p50).padStart(15)}${maybe(s.answerMs.p99).padStart(7)}` +
          `${maybe(s.adviceMs.p50).padStart(15)}${maybe(s.adviceMs.p99).padStart(7)}`,
      );
    }
    for (const s of figures.senders) {
      const notes: string[] = [];
      if (s.expired > 0) notes.push(`${s.expired} never landed (blockhash expired)`);
      if (s.unresolved > 0) notes.push(`${s.unresolved} not landed when the wait ended`);
      if (s.failedOnChain > 0) notes.push(`${s.failedOnChain} failed on chain`);
      if (s.overpayment.lowestFree > 0) notes.push(`${s.overpayment.lowestFree} landed where a free transaction landed too`);
      for (const [why, count] of Object.entries(s.refusals)) notes.push(`refused ${count}×: ${why}`);
      for (const [why, count] of Object.entries(s.adviceFailures)) notes.push(`no advice ${count}×: ${why}`);
      if (notes.length > 0) lines.push(`    ${s.sender}: ${notes.join('; ')}`);
      if (s.sender === 'advised' && s.late.length > 0)
        lines.push(
          `    advised, not within ${market.withinSlots} slots (sent slot → landed slot, price / lowest landed price in the slots after it): ` +
            s.late
              .map(
                (late) =>
                  `${late.slot}→${late.landedSlot ?? 'never'} ${late.price}/${late.lowestLandedPriceNext ?? '?'}${late.hot ? ' hot' : ''}`,
              )
              .join('; '),
        );
    }
    lines.push(
      `    (a)'s median priority over the median lowest landed priority of its slots: ${ratio(figures.advisedOverpayment)} (prices: ${ratio(figures.advisedPriceRatio)})`,
    );
    lines.push(calibrationLine('counted here', figures.calibration.client));
    if (figures.calibration.gateway !== null) lines.push(calibrationLine("the gateway's", figures.calibration.gateway));
    else lines.push(`    calibration, the gateway's: none (${figures.calibration.gatewayNote ?? 'not read'})`);
    lines.push(
      `    blocks read ${fmt(figures.blocks.read)}, unread ${fmt(figures.blocks.unread)}; full (≥ 99 % of their units) while sending: ${figures.blocks.fullPct === null ? 'not known' : `${fmt(figures.blocks.fullPct, 1)} %`}`,
    );
    const { seed, burst, sentSlots, seen } = figures.weather;
    lines.push(
      `    weather: market seed ${seed}, a token launch due from the market's slot ${burst.start} for ${burst.slots} slots; sent over slots ${sentSlots.from}–${sentSlots.to}; ${seen}`,
    );
  }
  return lines.join('\n') + '\n';
}
