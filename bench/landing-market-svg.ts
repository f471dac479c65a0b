/** The landing benchmark's chart: landed % within the slots asked against the market's load, one line per sender. */
import type { LandingMarket } from './landing-market-shapes';

const COLOURS: Record<string, string> = {
  advised: '#2a6fdb',
  plain: '#d9480f',
  jito: '#2b8a3e',
  tpu: '#7048e8',
  lowFee: '#868e96',
  calibration: '#000',
};
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function landingMarketChart(market: LandingMarket): string {
  const width = 900;
  const height = 420;
  const left = 70;
  const top = 60;
  const plotW = 460;
  const plotH = 280;
  const loads = market.loads.map((figures) => figures.load);
  // The loads are spaced by their logarithm (0.5, 1, 2, 4 evenly).
  const logs = loads.map(Math.log2);
  const minLog = Math.min(...logs);
  const span = Math.max(...logs) - minLog || 1;
  const x = (load: number) => left + (loads.length === 1 ? plotW / 2 : ((Math.log2(load) - minLog) / span) * plotW);
  const y = (pct: number) => top + plotH - (pct / 100) * plotH;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="13">`);
  out.push('<rect width="100%" height="100%" fill="white"/>');
  out.push(
    `<text x="20" y="26" font-size="16" font-weight="bold">Landed within ${market.withinSlots} slots of sending, by market load (${escape(market.commit.slice(0, 12))}, ${escape(market.at.slice(0, 16))} UTC, ${market.mode})</text>`,
  );
  for (const pct of [0, 25, 50, 75, 100]) {
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(pct)}" y2="${y(pct)}" stroke="#ddd"/>`);
    out.push(`<text x="${left - 8}" y="${y(pct) + 4}" text-anchor="end">${pct} %</text>`);
  }
  for (const load of loads) out.push(`<text x="${x(load)}" y="${top + plotH + 20}" text-anchor="middle">${load}×</text>`);
  out.push(`<text x="${left + plotW / 2}" y="${top + plotH + 42}" text-anchor="middle">market load (× the block's capacity)</text>`);
  const names = (market.loads[0]?.senders ?? []).map((sender) => sender.sender).filter((name) => name !== 'calibration');
  names.forEach((name, i) => {
    const points = market.loads
      .map((figures) => ({ load: figures.load, pct: figures.senders.find((sender) => sender.sender === name)?.landedWithinPct }))
      .filter((point): point is { load: number; pct: number } => point.pct !== undefined);
    const path = points.map((point) => `${x(point.load).toFixed(1)},${y(point.pct).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${path}" fill="none" stroke="${COLOURS[name] ?? '#000'}" stroke-width="2"/>`);
    for (const point of points)
      out.push(`<circle cx="${x(point.load).toFixed(1)}" cy="${y(point.pct).toFixed(1)}" r="3.5" fill="${COLOURS[name] ?? '#000'}"/>`);
    const description = market.loads[0]!.senders.find((sender) => sender.sender === name)!.description;
    out.push(`<rect x="${left + plotW + 20}" y="${top + i * 22}" width="12" height="12" fill="${COLOURS[name] ?? '#000'}"/>`);
    out.push(`<text x="${left + plotW + 38}" y="${top + i * 22 + 11}" font-size="11">${escape(description.slice(0, 55))}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
