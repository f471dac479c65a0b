/** The benchmark's outputs: a table on the terminal, `latest.json`, and `latest.svg`, a chart a person can read. */
import fs from 'node:fs';
import path from 'node:path';
import type { BenchResults } from './bench-results';
import { fmt } from './format';
import { landingTable } from './landing-table';

/** The figures the benchmark is held to (reported, not asserted in tests). */
export const TARGETS = {
  sendTransaction_cpu_excl_verify_vs_ceiling: { max: 2.5 },
  verify_cpu_vs_libsodium: { max: 1.2 },
  submitBatch_cpu_per_tx_vs_sendTransaction: { max: 1.5 },
  sendBundle_cpu_per_tx_vs_sendTransaction: { max: 1.5 },
  p99_vs_ceiling_at_quarter_capacity: { max: 3 },
  sendTransaction_vs_ceiling_rps: { min: 0.35 },
  sendTransaction_noverify_vs_ceiling_rps: { min: 0.6 },
  tpu_cpu_per_tx_vs_udp_send: { max: 20 },
} as const;

/** What `npm run bench:landing` writes into latest.json (landing-market.ts): kept when `npm run bench` writes the rest. */
const LANDING_MARKET_FIGURES = [
  'landing_2x_advised_within8_pct',
  'landing_2x_plain_within8_pct',
  'landing_2x_advised_overpayment',
  'landing_advice_calibration_max_error_pts',
] as const;

/**
 * The figures of `npm run bench:landing` and `npm run bench:strategy` in the latest.json at
 * `file` (`landing.market`, `landing.strategy`, the flat names), to be carried into the next one.
 */
export function landingFiguresOf(file: string): { landing: Record<string, unknown>; flat: Record<string, unknown> } {
  if (!fs.existsSync(file)) return { landing: {}, flat: {} };
  const previous = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown> & {
    landing?: { market?: unknown; strategy?: unknown };
  };
  const landing: Record<string, unknown> = {};
  for (const name of ['market', 'strategy'] as const) if (previous.landing?.[name] !== undefined) landing[name] = previous.landing[name];
  const flat = landing.market === undefined ? {} : Object.fromEntries(LANDING_MARKET_FIGURES.map((name) => [name, previous[name] ?? null]));
  return { landing, flat };
}

/** What `npm run bench:scaling` writes into latest.json (scaling.ts): `scaling` and its two ratios at the top. */
const SCALING_FIGURES = ['scaling', 'cluster_cpu_per_request_vs_embedded', 'cluster_rps_vs_embedded'] as const;

/** The figures of `npm run bench:scaling` in the latest.json at `file`, to be carried into the next one. */
export function scalingFiguresOf(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) return {};
  const previous = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (previous.scaling === undefined) return {};
  return Object.fromEntries(SCALING_FIGURES.map((name) => [name, previous[name] ?? null]));
}

export function writeReport(results: BenchResults, dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'latest.json');
  // bench:landing's, bench:strategy's and bench:scaling's figures (with the commits they measured) stay until those benchmarks run again.
  const kept = landingFiguresOf(file);
  const scaling = scalingFiguresOf(file);
  const landing = { ...results.landing, ...kept.landing };
  const written =
    Object.keys(landing).length === 0 ? { ...results, ...kept.flat, ...scaling } : { ...results, landing, ...kept.flat, ...scaling };
  fs.writeFileSync(file, JSON.stringify(written, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, 'latest.svg'), chart(results));
  process.stdout.write(table(results));
  process.stdout.write(`\nwrote ${path.join(dir, 'latest.json')} and latest.svg\n`);
}

export function table(r: BenchResults): string {
  const { ceiling, slipway } = r;
  const lines: string[] = [];
  const state = r.machineState;
  lines.push(
    `Slipway benchmark (${r.mode}) of ${r.commit.slice(0, 12)}${r.uncommittedChanges ? ' with uncommitted changes' : ''} on ${r.machine.cores} cores, ${r.machine.cpu}, Node ${r.machine.node}`,
  );
  lines.push(
    `The machine that day (medians of ${r.runs} run${r.runs === 1 ? '' : 's'}): ceiling ${fmt(state.ceilingRps)} requests/s, ${fmt(state.ceilingCpuUsPerRequest, 1)} µs CPU a request; ` +
      `one libsodium verification ${fmt(state.libsodiumVerifyUs, 1)} µs; stolen by the host ${fmt(state.stealPct, 1)} %`,
  );
  lines.push('');
  lines.push('Full load (32 connections), the median run   requests/s  tx/s      p50 ms  p99 ms  failed  CPU µs/req');
  const row = (
    name: string,
    l: { rps: number; latencyMs: { p50: number; p99: number }; failed: number; cpuUsPerRequest?: number },
    tps?: number,
  ) =>
    lines.push(
      `  ${name.padEnd(43)}${fmt(l.rps).padStart(10)}  ${(tps === undefined ? '' : fmt(tps)).padStart(8)}  ${fmt(l.latencyMs.p50, 1).padStart(6)}  ${fmt(l.latencyMs.p99, 1).padStart(6)}  ${String(l.failed).padStart(6)}  ${(l.cpuUsPerRequest === undefined ? '' : fmt(l.cpuUsPerRequest, 1)).padStart(10)}`,
    );
  row('ceiling (bare node:http)', ceiling.load);
  row('sendTransaction, everything on', slipway.sendTransaction, slipway.sendTransaction.rps);
  row('sendTransaction, verification off', slipway.sendTransactionNoVerify, slipway.sendTransactionNoVerify.rps);
  if (slipway.sendTransactionLogInfo !== undefined)
    row('sendTransaction, logging at info', slipway.sendTransactionLogInfo, slipway.sendTransactionLogInfo.rps);
  row('/submit-batch, 5 transactions', slipway.submitBatch, slipway.submitBatch.tps);
  row('sendBundle, 5 transactions', slipway.sendBundle, slipway.sendBundle.tps);
  row('sendTransaction, embedded ledger (e2e)', slipway.embeddedLedger, slipway.embeddedLedger.rps);
  lines.push('');
  lines.push('Open loop, timed from when each request was due         rate   p50 µs  p90 µs  p99 µs  p99.9 µs  failed');
  const lat = (name: string, l: BenchResults['ceiling']['quarter']) =>
    lines.push(
      `  ${name.padEnd(50)}${fmt(l.achievedRate).padStart(7)}${fmt(l.p50).padStart(9)}${fmt(l.p90).padStart(8)}${fmt(l.p99).padStart(8)}${fmt(l.p999).padStart(10)}${String(l.failed).padStart(8)}`,
    );
  lat('ceiling at 25 % of its capacity', ceiling.quarter);
  lat('Slipway sendTransaction at the same rate', slipway.quarter);
  lat('Slipway sendTransaction at 50 % of its own capacity', slipway.half);
  lines.push('');
  lines.push(`Transactions signed before each run; signed during a run because they ran out: ${r.signedDuringRuns}`);
  lines.push('');
  lines.push('Cost per transaction, in isolation               µs');
  for (const part of r.costParts) lines.push(`  ${part.name.padEnd(45)}${fmt(part.micros, 1).padStart(7)}`);
  const tpu = r.tpu;
  lines.push('');
  lines.push(`TPU over QUIC (receiver: ${tpu.receiver})`);
  lines.push(`  floor: dgram.send of 1,252 bytes                ${fmt(tpu.floor.cpuUsPerDatagram, 1).padStart(7)} µs CPU per datagram`);
  for (const run of [tpu.oneLeader, tpu.severalLeaders])
    lines.push(
      `  ${`${run.leaders} leader${run.leaders > 1 ? 's' : ''}, one process`.padEnd(45)}${fmt(run.cpuUsPerTx, 1).padStart(7)} µs CPU per transaction, ` +
        `${fmt(run.tps)} transactions/s, ${fmt(run.datagramsPerTx, 2)} datagrams each, receivers ${fmt(run.receiverCpuUsPerTx, 1)} µs`,
    );
  if (r.soak) {
    const rss = r.soak.rssMiB;
    const half = rss.slice(Math.floor(rss.length / 2));
    lines.push('');
    const firstHalfMax = Math.max(...rss.slice(0, Math.floor(rss.length / 2)));
    lines.push(
      `Soak: ${r.soak.seconds} s at ${fmt(r.soak.rps)} requests/s (duplicate window ${r.soak.duplicateTtlMs / 1000} s); resident set max ${fmt(Math.max(...rss))} MiB; ` +
        `first half max ${fmt(firstHalfMax)} MiB, second half ${fmt(Math.min(...half))}–${fmt(Math.max(...half))} MiB`,
    );
  }
  if (r.landing !== undefined) {
    lines.push('');
    lines.push(landingTable(r.landing).trimEnd());
  }
  lines.push('');
  lines.push(`Ratios (median of ${r.runs} run${r.runs === 1 ? '' : 's'}, spread min–max)                value   spread         target`);
  for (const [name, value] of Object.entries(r.ratios)) {
    const target = TARGETS[name as keyof typeof TARGETS] as { min?: number; max?: number } | undefined;
    const goal = target === undefined ? '' : target.min !== undefined ? `≥ ${target.min}` : `≤ ${target.max}`;
    const met = target === undefined ? '' : (target.min !== undefined ? value >= target.min : value <= target.max!) ? '  met' : '  NOT MET';
    const range = r.spread[name];
    const spread = range === undefined || r.runs === 1 ? '' : `${fmt(range.min, 2)}–${fmt(range.max, 2)}`;
    lines.push(`  ${name.padEnd(52)}${fmt(value, 2).padStart(7)}   ${spread.padEnd(13)}  ${goal}${met}`);
  }
  return lines.join('\n') + '\n';
}

function chart(r: BenchResults): string {
  const bars: { label: string; value: number; unit: string }[] = [
    { label: 'ceiling (bare node:http)', value: r.ceiling.load.rps, unit: 'req/s' },
    { label: 'sendTransaction, everything on', value: r.slipway.sendTransaction.rps, unit: 'req/s' },
    { label: 'sendTransaction, verification off', value: r.slipway.sendTransactionNoVerify.rps, unit: 'req/s' },
    { label: '/submit-batch ×5 (transactions)', value: r.slipway.submitBatch.tps, unit: 'tx/s' },
    { label: 'sendBundle ×5 (transactions)', value: r.slipway.sendBundle.tps, unit: 'tx/s' },
    { label: 'embedded ledger, end to end', value: r.slipway.embeddedLedger.rps, unit: 'req/s' },
  ];
  const latencies = [
    { label: 'ceiling', values: [r.ceiling.quarter.p50, r.ceiling.quarter.p99, r.ceiling.quarter.p999] },
    { label: 'Slipway', values: [r.slipway.quarter.p50, r.slipway.quarter.p99, r.slipway.quarter.p999] },
  ];
  const width = 900;
  const barMax = Math.max(...bars.map((b) => b.value));
  const latMax = Math.max(...latencies.flatMap((l) => l.values));
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="460" font-family="sans-serif" font-size="13">`);
  out.push('<rect width="100%" height="100%" fill="white"/>');
  out.push(
    `<text x="20" y="28" font-size="17" font-weight="bold">Slipway vs the machine's ceiling (${r.machine.cores} cores, ${escape(r.machine.cpu)})</text>`,
  );
  out.push('<text x="20" y="52">Throughput at full load, 32 connections</text>');
  bars.forEach((bar, i) => {
    const y = 64 + i * 30;
    const w = (bar.value / barMax) * 480;
    out.push(`<text x="20" y="${y + 15}">${escape(bar.label)}</text>`);
    out.push(`<rect x="270" y="${y}" width="${w.toFixed(1)}" height="20" fill="${i === 0 ? '#888' : '#2a6fdb'}"/>`);
    out.push(`<text x="${(276 + w).toFixed(1)}" y="${y + 15}">${fmt(bar.value)} ${bar.unit}</text>`);
  });
  out.push(
    `<text x="20" y="272">Latency at ${fmt(r.ceiling.quarter.achievedRate)} requests/s (25 % of the ceiling's capacity), open loop (µs): p50 / p99 / p99.9</text>`,
  );
  const colors = ['#9ecae1', '#3182bd', '#08519c'];
  latencies.forEach((l, i) => {
    l.values.forEach((v, j) => {
      const y = 284 + i * 80 + j * 22;
      const w = (v / latMax) * 480;
      if (j === 0) out.push(`<text x="20" y="${y + 15}">${l.label}</text>`);
      out.push(`<rect x="270" y="${y}" width="${w.toFixed(1)}" height="18" fill="${colors[j]}"/>`);
      out.push(`<text x="${(276 + w).toFixed(1)}" y="${y + 14}">${['p50', 'p99', 'p99.9'][j]} ${fmt(v)} µs</text>`);
    });
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
