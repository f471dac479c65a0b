/**
 * `npm run bench:strategy [-- --quick | --loads 2,4 | --seconds N]`: which way of sending lands
 * more for less on the congested cluster. For each market load (default 2 and 4 × the block's
 * capacity; --quick: 2 for 20 s), a fresh local cluster and one gateway per strategy
 * (STRATEGIES: leader windows sent to, rebroadcast interval, routes raced), each sending the
 * same stream of transfers (every third writing the market's hot account) at the same price:
 * getPriorityFeeEstimate's LEVEL, asked of the default strategy's gateway once a slot per
 * shape, so that the way of sending is all that differs. A contested price (Low: the 25th
 * percentile of what landed), so that what a strategy loses shows.
 *
 * Per strategy: landed %, landed within 2 and within 8 slots, slots p50/p90/p99, and what it
 * cost the network: sends per transaction (upstream sends over transactions taken, first
 * sends and rebroadcasts) and TPU hand-offs per transaction (one per leader a send reached),
 * read from the gateway's /metrics. Prints a table; writes `landing.strategy` into
 * bench/results/latest.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bs58 from 'bs58';
import { Pool, request } from 'undici';
import { HOT_ACCOUNT } from '../src/market/market';
import { parsePrometheusText } from '../src/metrics/prometheus-text';
import { levelEstimate } from './landing-advice';
import { BlockWatcher } from './landing-blocks';
import { followUntilSettled, jsonRpc, keepBlockhashFresh, sleep, type Call } from './landing-load';
import { senderFigures } from './landing-market-figures';
import { parseLandingOptions } from './landing-market-options';
import type { SenderFigures } from './landing-market-shapes';
import { viaGateway, UserSender, type Pricing } from './landing-senders';
import { commitMeasured } from './machine-state';
import { cpuDuring } from './proc-cpu';
import { createKey, startSlipway, type ServerProcess } from './processes';
import {
  BLOCK_UNITS,
  describeSeenBursts,
  describeWeather,
  hotShares,
  SENDER_LAMPORTS,
  SLOT_MS,
  startCongestedCluster,
  TICK_MS,
  WITHIN_SLOTS,
  weatherFor,
  type Weather,
} from './landing-weather';

/** The price every strategy pays: a contested one, so that what a strategy loses shows. */
const LEVEL = 'Low' as const;
const DEFAULT_LOADS = [2, 4];
const HOT_ACCOUNT_TEXT = bs58.encode(HOT_ACCOUNT);

/** One way of sending: the routes a gateway races, the leader windows its TPU upstream sends to, how often it rebroadcasts. */
interface Strategy {
  readonly name: string;
  readonly description: string;
  readonly routes: readonly ('node' | 'engine' | 'leaders')[];
  readonly leaderWindows: number;
  readonly rebroadcastMs: number;
}

/** The default strategy first: its gateway answers the price every strategy pays. */
const STRATEGIES: readonly Strategy[] = [
  {
    name: 'all-2w-2s',
    description: 'node, engine and leaders raced; 2 windows; every 2 s (the defaults)',
    routes: ['node', 'engine', 'leaders'],
    leaderWindows: 2,
    rebroadcastMs: 2_000,
  },
  {
    name: 'tpu-1w-2s',
    description: 'TPU only, the current leader window only, every 2 s',
    routes: ['leaders'],
    leaderWindows: 1,
    rebroadcastMs: 2_000,
  },
  {
    name: 'tpu-2w-2s',
    description: 'TPU only, current and next windows (the default), every 2 s',
    routes: ['leaders'],
    leaderWindows: 2,
    rebroadcastMs: 2_000,
  },
  { name: 'tpu-3w-2s', description: 'TPU only, three windows, every 2 s', routes: ['leaders'], leaderWindows: 3, rebroadcastMs: 2_000 },
  {
    name: 'tpu-2w-400ms',
    description: 'TPU only, two windows, rebroadcast every slot',
    routes: ['leaders'],
    leaderWindows: 2,
    rebroadcastMs: 400,
  },
  {
    name: 'tpu-1w-400ms',
    description: 'TPU only, the current window, rebroadcast every slot',
    routes: ['leaders'],
    leaderWindows: 1,
    rebroadcastMs: 400,
  },
  {
    name: 'rpc-2s',
    description: 'the RPC node only (it forwards to the upcoming leaders), every 2 s',
    routes: ['node'],
    leaderWindows: 2,
    rebroadcastMs: 2_000,
  },
  {
    name: 'all-2w-400ms',
    description: 'node, engine and leaders raced; 2 windows; every slot',
    routes: ['node', 'engine', 'leaders'],
    leaderWindows: 2,
    rebroadcastMs: 400,
  },
];

export interface StrategyFigures {
  readonly strategy: string;
  readonly description: string;
  readonly leaderWindows: number;
  readonly rebroadcastMs: number;
  readonly routes: readonly string[];
  readonly sent: number;
  readonly landedPct: number;
  /** Not landed, its blockhash expired; not landed when following ended, its blockhash still valid. */
  readonly expired: number;
  readonly unresolved: number;
  readonly landedWithin2Pct: number;
  readonly landedWithin8Pct: number;
  readonly hotWithin8Pct: number;
  readonly slots: SenderFigures['slots'];
  /** Upstream sends (first sends and rebroadcasts, every route) over the transactions the gateway took. */
  readonly sendsPerTransaction: number | null;
  /** Leaders a transaction was handed to over the TPU (every send), over the transactions taken. */
  readonly tpuHandoffsPerTransaction: number | null;
  readonly refusals: Record<string, number>;
}

export interface StrategyLoad {
  readonly load: number;
  readonly pricePaidMedian: number | null;
  readonly strategies: readonly StrategyFigures[];
  /** The market's seed, the burst it starts (landing-weather.ts), and where the blocks showed it. */
  readonly weather: { readonly seed: number; readonly burst: { readonly start: number; readonly slots: number }; readonly seen: string };
  readonly cpu: unknown;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;

function configOf(strategy: Strategy, nodeUrl: string): object {
  const all = {
    node: { type: 'rpc', urls: [nodeUrl] },
    engine: { type: 'jito', urls: [`${nodeUrl}/api/v1`] },
    leaders: { type: 'tpu', urls: [nodeUrl], leaderWindows: strategy.leaderWindows },
  };
  const used = [...strategy.routes];
  const reads = used.includes('node') ? 'node' : 'leaders';
  return {
    upstreams: Object.fromEntries(used.map((name) => [name, all[name]])),
    routes: {
      sendTransaction: used,
      submitBatch: used,
      sendBundle: used.includes('engine') ? ['engine'] : [],
      antiMev: used.filter((name) => name !== 'node'),
      reads,
    },
    rebroadcast: { intervalMs: strategy.rebroadcastMs },
  };
}

/** A metric's samples summed over the label sets `match` accepts, from a Prometheus text page. */
export function sumMetric(page: string, name: string, match: (labels: Readonly<Record<string, string>>) => boolean = () => true): number {
  return parsePrometheusText(page)
    .filter((sample) => sample.name === name && match(sample.labels))
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function metricsOf(server: ServerProcess): Promise<string> {
  const answer = await request(`${server.url}/metrics`);
  return answer.body.text();
}

/**
 * Every strategy's price: getPriorityFeeEstimate's LEVEL from the default gateway, asked at
 * most once a slot for each shape (hot or not).
 */
function sharedPricing(gateway: Call, paid: number[]): Pricing {
  const cache = new Map<boolean, { at: number; price: Promise<number> }>();
  return async (accountKeys) => {
    const hot = accountKeys.includes(HOT_ACCOUNT_TEXT);
    let held = cache.get(hot);
    if (held === undefined || Date.now() - held.at >= SLOT_MS) {
      const price = levelEstimate(gateway, accountKeys, LEVEL);
      // A failed answer is asked again by the next transaction, not kept.
      price.catch(() => cache.delete(hot));
      held = { at: Date.now(), price };
      cache.set(hot, held);
    }
    const price = await held.price;
    paid.push(price);
    return { price, tip: 0, probability: null };
  };
}

async function measureLoad(load: number, weather: Weather, seconds: number, warmSeconds: number, maxWaitSeconds: number, work: string) {
  const dir = fs.mkdtempSync(path.join(work, `load-${load}-`));
  const servers: ServerProcess[] = [];
  const pools: Pool[] = [];
  const pool = (url: string) => {
    const made = new Pool(url, { connections: 32, pipelining: 1 });
    pools.push(made);
    return made;
  };
  try {
    log(`load ${load}: starting the cluster and ${STRATEGIES.length} gateways, one per strategy`);
    const ledger = await startCongestedCluster(path.join(dir, 'cluster'), load, weather);
    servers.push(ledger);
    const node = jsonRpc(pool(ledger.url));
    const gateways: { strategy: Strategy; server: ServerProcess; key: string }[] = [];
    for (const strategy of STRATEGIES) {
      const dataDir = path.join(dir, strategy.name);
      fs.mkdirSync(dataDir, { recursive: true });
      const key = await createKey(dataDir, 'strategy');
      const configFile = path.join(dataDir, 'slipway.config.json');
      fs.writeFileSync(configFile, JSON.stringify(configOf(strategy, ledger.url), null, 2));
      const server = await startSlipway(dataDir, ['--config', configFile]);
      servers.push(server);
      gateways.push({ strategy, server, key });
    }
    const reference = gateways[0]!;
    const estimates = jsonRpc(pool(reference.server.url), { 'x-api-key': reference.key });
    const paid: number[] = [];
    const pricing = sharedPricing(estimates, paid);
    const runId = `${process.pid} ${Date.now()} ${load} strategy`;
    const senders = gateways.map(
      ({ strategy, server, key }) => new UserSender(strategy.name, pricing, viaGateway(pool(server.url), key), runId),
    );
    for (const sender of senders) await node('requestAirdrop', [sender.address, SENDER_LAMPORTS]);
    const watcher = new BlockWatcher(node, await node<number>('getSlot', [{ commitment: 'confirmed' }]));

    log(`load ${load}: warming up for ${warmSeconds} s`);
    const until = Date.now() + warmSeconds * 1000;
    while (Date.now() < until) {
      await levelEstimate(estimates, [senders[0]!.address], LEVEL).catch(() => {});
      await sleep(SLOT_MS);
    }
    const before = await Promise.all(gateways.map(({ server }) => metricsOf(server)));

    log(`load ${load}: sending for ${seconds} s (${1000 / TICK_MS} a second through each of ${senders.length} gateways)`);
    const cpuMeter = cpuDuring(ledger.pid, Object.fromEntries(gateways.map(({ strategy, server }) => [strategy.name, server.pid])));
    const blockhash = await keepBlockhashFresh(node);
    const ticks = Math.floor((seconds * 1000) / TICK_MS);
    const started = performance.now();
    try {
      for (let tick = 0; tick < ticks; tick++) {
        const wait = started + tick * TICK_MS - performance.now();
        if (wait > 0) await sleep(wait);
        for (let i = 0; i < senders.length; i++) senders[(tick + i) % senders.length]!.send(node, blockhash.current);
      }
    } finally {
      blockhash.stop();
    }
    await Promise.all(senders.map((sender) => sender.settle()));
    const cpu = cpuMeter.end();

    log(`load ${load}: following every transaction until it landed or expired (at most ${maxWaitSeconds} s)`);
    const everything = senders.flatMap((sender) => sender.sent);
    await followUntilSettled(everything, node, maxWaitSeconds * 1000);
    await watcher.stop(Math.max(0, ...everything.map((entry) => entry.landedSlot ?? 0)));
    const after = await Promise.all(gateways.map(({ server }) => metricsOf(server)));

    const strategies = gateways.map(({ strategy }, i): StrategyFigures => {
      const sender = senders[i]!;
      const figures = senderFigures(sender, strategy.description, watcher.slots, WITHIN_SLOTS);
      const within2 = senderFigures(sender, strategy.description, watcher.slots, 2);
      const delta = (name: string, match?: (labels: Readonly<Record<string, string>>) => boolean) =>
        sumMetric(after[i]!, name, match) - sumMetric(before[i]!, name, match);
      const taken = figures.accepted;
      const sends = delta('slipway_upstream_sends_total', (labels) => labels.operation === 'transaction' && labels.outcome === 'ok');
      const handoffs = delta('slipway_tpu_sends_total', (labels) => labels.outcome === 'queued');
      return {
        strategy: strategy.name,
        description: strategy.description,
        leaderWindows: strategy.leaderWindows,
        rebroadcastMs: strategy.rebroadcastMs,
        routes: strategy.routes,
        sent: figures.sent,
        landedPct: figures.landedPct,
        expired: figures.expired,
        unresolved: figures.unresolved,
        landedWithin2Pct: within2.landedWithinPct,
        landedWithin8Pct: figures.landedWithinPct,
        hotWithin8Pct: figures.hot.landedWithinPct,
        slots: figures.slots,
        sendsPerTransaction: taken === 0 ? null : round(sends / taken),
        tpuHandoffsPerTransaction: taken === 0 || !strategy.routes.includes('leaders') ? null : round(handoffs / taken),
        refusals: figures.refusals,
      };
    });
    const sorted = [...paid].sort((a, b) => a - b);
    const seen = describeSeenBursts(hotShares(watcher.slots));
    return {
      load,
      pricePaidMedian: sorted.length === 0 ? null : sorted[Math.floor(sorted.length / 2)]!,
      strategies,
      weather: { seed: weather.seed, burst: weather.burst, seen },
      cpu,
    };
  } finally {
    await Promise.allSettled(pools.map((made) => made.close()));
    await Promise.allSettled(servers.slice(1).map((server) => server.stop()));
    if (servers[0] !== undefined) await servers[0].stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function table(figures: StrategyLoad): string {
  const fmt = (value: number | null, places = 1) => (value === null ? '—' : value.toFixed(places));
  const lines = [
    `\nload ${figures.load} × the block (price paid by all: getPriorityFeeEstimate ${LEVEL}, median ${figures.pricePaidMedian ?? '—'} micro-lamports per unit)`,
    '  strategy        sent  landed %  ≤2 slots %  ≤8 slots %  hot ≤8 %  slots p50  p90  p99  sends/tx  TPU hand-offs/tx',
  ];
  for (const s of figures.strategies)
    lines.push(
      `  ${s.strategy.padEnd(14)}${String(s.sent).padStart(6)}${fmt(s.landedPct).padStart(10)}${fmt(s.landedWithin2Pct).padStart(12)}` +
        `${fmt(s.landedWithin8Pct).padStart(12)}${fmt(s.hotWithin8Pct).padStart(10)}${fmt(s.slots.p50, 0).padStart(11)}${fmt(s.slots.p90, 0).padStart(5)}` +
        `${fmt(s.slots.p99, 0).padStart(5)}${fmt(s.sendsPerTransaction, 2).padStart(10)}${fmt(s.tpuHandoffsPerTransaction, 2).padStart(18)}`,
    );
  for (const s of figures.strategies) {
    const notes = [
      ...(s.expired + s.unresolved > 0 ? [`not landed: ${s.expired} expired, ${s.unresolved} still waiting when following ended`] : []),
      ...(Object.keys(s.refusals).length > 0 ? [`refused ${JSON.stringify(s.refusals)}`] : []),
    ];
    if (notes.length > 0) lines.push(`    ${s.strategy}: ${notes.join('; ')}`);
  }
  const { seed, burst, seen } = figures.weather;
  lines.push(`  weather: market seed ${seed}, a token launch due from the market's slot ${burst.start} for ${burst.slots} slots; ${seen}`);
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const options = parseLandingOptions(
    args.includes('--loads') || args.includes('--quick') ? args : [...args, '--loads', DEFAULT_LOADS.join(',')],
  );
  if (typeof options === 'string') {
    process.stderr.write(`bench:strategy: ${options.replace('bench:landing', 'bench:strategy')}\n`);
    process.exitCode = 2;
    return;
  }
  const measured = commitMeasured();
  const at = new Date().toISOString();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-landing-strategy-'));
  const loads: StrategyLoad[] = [];
  const weather = weatherFor(options.warmSeconds, options.sendSeconds, SLOT_MS);
  log(describeWeather(weather));
  try {
    for (const load of options.loads) {
      const figures = await measureLoad(load, weather, options.sendSeconds, options.warmSeconds, options.maxWaitSeconds, work);
      loads.push(figures);
      process.stdout.write(table(figures));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const file = path.resolve(__dirname, '../../bench/results/latest.json');
  const latest = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  const landing = (latest.landing ?? {}) as Record<string, unknown>;
  const strategy = {
    commit: measured.commit,
    uncommittedChanges: measured.dirty,
    at,
    mode: options.quick ? 'quick' : 'default',
    slotMs: SLOT_MS,
    blockUnits: BLOCK_UNITS,
    priorityLevel: LEVEL,
    withinSlots: WITHIN_SLOTS,
    loads,
  };
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify({ ...latest, landing: { ...landing, strategy } }, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
  process.stdout.write(`wrote landing.strategy into ${file}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench:strategy failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
