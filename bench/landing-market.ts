/**
 * `npm run bench:landing [-- --quick | --loads 0.5,2 | --seconds N]`: landing on a congested
 * cluster. For each market load (0.5, 1, 2 and 4 × the block's capacity; --quick: load 2
 * for 20 s), a fresh local cluster (`bin/slipway ledger --market LOAD`, 400 ms slots) and three
 * gateways (all routes, Jito only, TPU only), then the same stream of user transactions
 * (transfers, every third writing the market's hot account) from five senders at once:
 *
 *   (a) advised   Slipway, all routes, at getLandingEstimate's price for p = 0.9 within 8 slots
 *   (b) plain     @solana/web3.js sendRawTransaction to the node (its default retries), at a
 *                 getPriorityFeeEstimate Medium price, confirmed by polling
 *   (c) jito      Slipway, Jito only, tipping the tip floor's 50th percentile (no priority fee)
 *   (d) tpu       Slipway, TPU only, at getLandingEstimate's price as (a)
 *   (e) lowFee    Slipway, all routes, at a fixed low price (LOW_PRICE)
 *
 * and a calibration stream through (a)'s gateway and key asking advice for p in 0.05, 0.15, …,
 * 0.95 in turns. Each transaction's slot from send is its landed slot − the cluster's slot
 * read just before sending; each slot's block is read as the slots go by for the lowest
 * price that landed in it. Prints a table per load and sender and says which targets are
 * missed; merges the figures into bench/results/latest.json (`landing.market` and the flat
 * headline names) and draws bench/results/landing-market.svg.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { LandingAdvisor, levelEstimate, tipFloorP50 } from './landing-advice';
import { BlockWatcher } from './landing-blocks';
import { gatewayDir, startGateway, type GatewayKind } from './landing-gateways';
import { followUntilSettled, jsonRpc, keepBlockhashFresh, sleep, type Call } from './landing-load';
import { advisedOverpayment, clientCalibration, landingMarketStatistics, senderFigures, targetChecks } from './landing-market-figures';
import type { Calibration, LandingMarket, LoadFigures } from './landing-market-shapes';
import { parseLandingOptions, type LandingOptions } from './landing-market-options';
import { landingMarketTable } from './landing-market-table';
import { landingMarketChart } from './landing-market-svg';
import { viaGateway, viaWeb3, UserSender, type Pricing, type SenderName } from './landing-senders';
import { commitMeasured } from './machine-state';
import { median } from './median';
import { cpuDuring } from './proc-cpu';
import { createKey, type ServerProcess } from './processes';
import {
  BLOCK_UNITS,
  SENDER_LAMPORTS,
  TICK_MS,
  WITHIN_SLOTS,
  describeSeenBursts,
  describeWeather,
  hotShares,
  SLOT_MS,
  startCongestedCluster,
  weatherFor,
  type Weather,
} from './landing-weather';

const PROBABILITY = 0.9;
/**
 * The calibration stream's transactions a slot (6: 15 a second, so that the default 75 s gives
 * about 112 for each of the ten probabilities asked, taken in turns, not drawn, so each gets
 * its share).
 */
const CALIBRATION_PER_SLOT = 6;
const CALIBRATION_PROBABILITIES = [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95];
/** (e)'s price, micro-lamports per unit: a fiftieth of the market's median (fee-weather.ts MEDIAN_PRICE, 5,000). */
const LOW_PRICE = 100;
/** The tip floor is read again this often while sending. */
const TIP_FLOOR_REFRESH_MS = 10_000;
/** Slots of landed bundles the tip floor is computed from when the gateway does not serve one (a minute). */
const TIP_FLOOR_SLOTS = 150;
/** Jito's minimum tip, paid when no tip floor is known yet. */
const MIN_TIP_LAMPORTS = 1_000;

const DESCRIPTIONS: Record<SenderName, string> = {
  advised: `(a) Slipway, all routes, advice for p = ${PROBABILITY} within ${WITHIN_SLOTS} slots`,
  plain: '(b) web3.js sendRawTransaction to the node, Medium estimate',
  jito: "(c) Slipway, Jito only, the tip floor's 50th percentile",
  tpu: '(d) Slipway, TPU only, the same advice as (a)',
  lowFee: `(e) Slipway, all routes, a fixed ${LOW_PRICE} micro-lamports per unit`,
  calibration: '(a) calibration stream, advice for p from 0.05 to 0.95',
};

/** An endless deck of the calibration probabilities, each round shuffled. */
function calibrationDeck(): () => number {
  let deck: number[] = [];
  return () => {
    if (deck.length === 0) deck = [...CALIBRATION_PROBABILITIES].sort(() => Math.random() - 0.5);
    return deck.pop()!;
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** One load's processes: the cluster, its node's JSON-RPC, the three gateways and their keys. */
interface Stage {
  readonly ledger: ServerProcess;
  readonly node: Call;
  readonly all: ServerProcess;
  readonly jito: ServerProcess;
  readonly tpu: ServerProcess;
  /** Key by name: (a)'s and the calibration stream's `advised`, `plain` (its estimates), `lowFee`, `jito`, `tpu`. */
  readonly keys: Readonly<Record<string, string>>;
}

/** Which gateway each key is created in: a key per sender, so that each has a report of its own. */
const KEYS: Record<GatewayKind, string[]> = { all: ['advised', 'plain', 'lowFee'], jito: ['jito'], tpu: ['tpu'], rpc: [] };

/** Starts the cluster at `load` and the three gateways under `dir`; every process started is in `servers`, the cluster first. */
async function startStage(
  load: number,
  weather: Weather,
  dir: string,
  servers: ServerProcess[],
  pool: (url: string) => Pool,
): Promise<Stage> {
  log(`load ${load}: starting the cluster (market at ${load} × ${BLOCK_UNITS.toLocaleString('en-US')} units a block) and three gateways`);
  const ledger = await startCongestedCluster(path.join(dir, 'cluster'), load, weather);
  servers.push(ledger);
  const kinds: GatewayKind[] = ['all', 'jito', 'tpu'];
  const keys: Record<string, string> = {};
  for (const kind of kinds) for (const name of KEYS[kind]) keys[name] = await createKey(gatewayDir(kind, dir), name);
  const started = await Promise.allSettled(kinds.map((kind) => startGateway(kind, ledger.url, dir)));
  for (const result of started) if (result.status === 'fulfilled') servers.push(result.value);
  for (const result of started) if (result.status === 'rejected') throw result.reason;
  const [all, jito, tpu] = servers.slice(1) as [ServerProcess, ServerProcess, ServerProcess];
  return { ledger, node: jsonRpc(pool(ledger.url)), all, jito, tpu, keys };
}

/** The tip (c) pays: the tip floor's 50th percentile, read again while sending. */
class TipToPay {
  private lamports: number | null = null;
  source = 'not read yet';
  readonly paid: number[] = [];

  constructor(
    private readonly stage: Stage,
    private readonly watcher: BlockWatcher,
  ) {}

  async read(): Promise<void> {
    const floor = await tipFloorP50(this.stage.jito.url, this.stage.keys.jito!, this.watcher.recentTips(TIP_FLOOR_SLOTS));
    if (floor.lamports !== null) this.lamports = Math.max(MIN_TIP_LAMPORTS, floor.lamports);
    this.source = floor.source;
  }

  /** The tip for the next transaction (Jito's minimum before any floor is known). */
  next(): number {
    const tip = this.lamports ?? MIN_TIP_LAMPORTS;
    this.paid.push(tip);
    return tip;
  }
}

/** The five senders, the calibration stream, and the advice they ask. */
interface Senders {
  readonly senders: readonly UserSender[];
  readonly calibration: UserSender;
  readonly advisor: LandingAdvisor;
  readonly tpuAdvisor: LandingAdvisor;
  readonly plainCall: Call;
}

function makeSenders(stage: Stage, load: number, tip: TipToPay, pool: (url: string) => Pool): Senders {
  const { all, jito, tpu, keys } = stage;
  const gateway = (server: ServerProcess, key: string): Call => jsonRpc(pool(server.url), { 'x-api-key': key });
  const advisor = new LandingAdvisor(gateway(all, keys.advised!));
  const tpuAdvisor = new LandingAdvisor(gateway(tpu, keys.tpu!));
  const plainCall = gateway(all, keys.plain!);
  const runId = `${process.pid} ${Date.now()} ${load}`;
  const adviceFor =
    (advice: LandingAdvisor, probability: () => number): Pricing =>
    async (_accountKeys, draft) => {
      // The transaction itself, so that the price is fitted to its shape (its loaded-data limit
      // of 32 KiB costs 8 units where accountKeys would be priced at the default 64 MiB's 16,384).
      const transaction = draft.toString('base64');
      const answer = await advice.advise({ transaction, probability: probability(), withinSlots: WITHIN_SLOTS });
      return { price: answer.price, tip: 0, probability: answer.probability };
    };
  const through = (server: ServerProcess, key: string) => viaGateway(pool(server.url), key);
  const senders = [
    new UserSender(
      'advised',
      adviceFor(advisor, () => PROBABILITY),
      through(all, keys.advised!),
      runId,
    ),
    new UserSender(
      'plain',
      async (accountKeys) => ({ price: await levelEstimate(plainCall, accountKeys, 'Medium'), tip: 0, probability: null }),
      viaWeb3(stage.ledger.url),
      runId,
    ),
    new UserSender('jito', async () => ({ price: 0, tip: tip.next(), probability: null }), through(jito, keys.jito!), runId),
    new UserSender(
      'tpu',
      adviceFor(tpuAdvisor, () => PROBABILITY),
      through(tpu, keys.tpu!),
      runId,
    ),
    new UserSender('lowFee', async () => ({ price: LOW_PRICE, tip: 0, probability: null }), through(all, keys.lowFee!), runId),
  ];
  const calibration = new UserSender(
    'calibration',
    adviceFor(new LandingAdvisor(gateway(all, keys.advised!)), calibrationDeck()),
    through(all, keys.advised!),
    runId,
  );
  return { senders, calibration, advisor, tpuAdvisor, plainCall };
}

/** Asks each gateway's advice once a slot for `seconds`: the market fills the blocks, and the advice reads the blocks it rests on. */
async function warmUp(made: Senders, seconds: number): Promise<void> {
  const until = Date.now() + seconds * 1000;
  const question = { accountKeys: [made.senders[0]!.address], computeUnits: 600, probability: PROBABILITY, withinSlots: WITHIN_SLOTS };
  while (Date.now() < until) {
    await Promise.allSettled([
      made.advisor.advise(question),
      made.tpuAdvisor.advise(question),
      levelEstimate(made.plainCall, question.accountKeys, 'Medium'),
    ]);
    await sleep(SLOT_MS);
  }
}

/** The user traffic: every TICK_MS one transaction from each sender, in turns, and the calibration stream's share. */
async function sendUserTraffic(made: Senders, node: Call, seconds: number): Promise<void> {
  const blockhash = await keepBlockhashFresh(node);
  const ticks = Math.floor((seconds * 1000) / TICK_MS);
  const calibrationPerTick = (CALIBRATION_PER_SLOT * TICK_MS) / SLOT_MS;
  const { senders, calibration } = made;
  const started = performance.now();
  try {
    for (let tick = 0; tick < ticks; tick++) {
      const wait = started + tick * TICK_MS - performance.now();
      if (wait > 0) await sleep(wait);
      // Rotated, so that no sender is always the first to reach the cluster in a tick.
      for (let i = 0; i < senders.length; i++) senders[(tick + i) % senders.length]!.send(node, blockhash.current);
      const calibrationNow = Math.floor((tick + 1) * calibrationPerTick) - Math.floor(tick * calibrationPerTick);
      for (let i = 0; i < calibrationNow; i++) calibration.send(node, blockhash.current);
    }
  } finally {
    blockhash.stop();
  }
  await Promise.all([...senders, calibration].map((sender) => sender.settle()));
}

async function measureLoad(load: number, weather: Weather, options: LandingOptions, work: string): Promise<LoadFigures> {
  const dir = fs.mkdtempSync(path.join(work, `load-${load}-`));
  const servers: ServerProcess[] = [];
  const pools: Pool[] = [];
  // A pool per use, wide enough for a request a sender makes every TICK_MS even when advice
  // takes a slot or more to answer: a narrow one would queue the sends behind each other
  // and measure the client, not the gateway.
  const pool = (url: string) => {
    const made = new Pool(url, { connections: 64, pipelining: 1 });
    pools.push(made);
    return made;
  };
  try {
    const stage = await startStage(load, weather, dir, servers, pool);
    const { node } = stage;
    const watcher = new BlockWatcher(node, await node<number>('getSlot', [{ commitment: 'confirmed' }]));
    const tip = new TipToPay(stage, watcher);
    const made = makeSenders(stage, load, tip, pool);
    const everyone = [...made.senders, made.calibration];
    for (const sender of everyone) await node('requestAirdrop', [sender.address, SENDER_LAMPORTS]);

    log(`load ${load}: warming up for ${options.warmSeconds} s (the market congests the cluster, the gateways read its blocks)`);
    await warmUp(made, options.warmSeconds);
    await tip.read();
    const sendingSince = Date.now();
    const firstSlot = await node<number>('getSlot', [{ commitment: 'confirmed' }]);

    log(
      `load ${load}: sending for ${options.sendSeconds} s (${1000 / TICK_MS} a second from each of 5 senders, ${(CALIBRATION_PER_SLOT * 1000) / SLOT_MS} a second of calibration)`,
    );
    const tipRefresher = setInterval(() => void tip.read().catch(() => {}), TIP_FLOOR_REFRESH_MS);
    const cpuMeter = cpuDuring(stage.ledger.pid, { all: stage.all.pid, jito: stage.jito.pid, tpu: stage.tpu.pid });
    try {
      await sendUserTraffic(made, node, options.sendSeconds);
    } finally {
      clearInterval(tipRefresher);
    }
    const cpu = cpuMeter.end();
    const sentSlots = { from: firstSlot, to: await node<number>('getSlot', [{ commitment: 'confirmed' }]) };

    log(`load ${load}: following every transaction until it landed or expired (at most ${options.maxWaitSeconds} s)`);
    const everything = everyone.flatMap((sender) => sender.sent);
    const waitedSeconds = await followUntilSettled(everything, node, options.maxWaitSeconds * 1000);
    await watcher.stop(Math.max(0, ...everything.map((entry) => entry.landedSlot ?? 0)));

    // The gateway's calibration, once its tracker has seen the last ones land (it checks every 2 s).
    await sleep(3_000);
    const advisedCall = jsonRpc(pool(stage.all.url), { 'x-api-key': stage.keys.advised! });
    const since = Math.ceil((Date.now() - sendingSince) / 1000) + 60;
    const gatewayCalibration = await readGatewayCalibration(advisedCall, since, made.advisor.fallback);

    const advised = made.senders[0]!;
    return {
      load,
      blockUnits: BLOCK_UNITS,
      sendSeconds: options.sendSeconds,
      waitedSeconds: Math.round(waitedSeconds * 10) / 10,
      senders: everyone.map((sender) => senderFigures(sender, DESCRIPTIONS[sender.name as SenderName], watcher.slots, WITHIN_SLOTS)),
      ...((o) => ({ advisedOverpayment: o.priority, advisedPriceRatio: o.price }))(advisedOverpayment(advised, watcher.slots)),
      adviceSource: made.advisor.fallback ?? 'getLandingEstimate',
      tipFloor: { lamportsMedian: tip.paid.length === 0 ? null : median(tip.paid), source: tip.source },
      calibration: {
        gateway: gatewayCalibration.calibration,
        gatewayNote: gatewayCalibration.note,
        client: clientCalibration([...advised.sent, ...made.calibration.sent], WITHIN_SLOTS),
      },
      blocks: { read: watcher.slots.size, unread: watcher.unread, fullPct: watcher.fullPct(sentSlots.from, sentSlots.to) },
      weather: { seed: weather.seed, burst: weather.burst, sentSlots, seen: describeSeenBursts(hotShares(watcher.slots)) },
      cpu,
    };
  } finally {
    await Promise.allSettled(pools.map((made) => made.close()));
    // Gateways first (they send to the cluster), the cluster last.
    await Promise.allSettled(servers.slice(1).map((server) => server.stop()));
    if (servers[0] !== undefined) await servers[0].stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** getLandingReport's `calibration` for (a)'s key over the run, or null with why. */
async function readGatewayCalibration(
  call: Call,
  seconds: number,
  fallback: string | null,
): Promise<{ calibration: Calibration | null; note: string | null }> {
  if (fallback !== null) return { calibration: null, note: fallback };
  try {
    const report = await call<{ calibration?: Calibration }>('getLandingReport', [{ since: seconds }]);
    if (report.calibration === undefined) return { calibration: null, note: 'getLandingReport has no calibration section' };
    return { calibration: report.calibration, note: null };
  } catch (error) {
    return { calibration: null, note: error instanceof Error ? error.message : String(error) };
  }
}

/** Merges the figures into latest.json: `landing.market` and the flat headline names; every other figure is kept. */
function mergeIntoLatest(file: string, market: LandingMarket): void {
  const latest = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  const landing = (latest.landing ?? {}) as Record<string, unknown>;
  const merged = { ...latest, landing: { ...landing, market }, ...landingMarketStatistics(market.loads) };
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(merged, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

async function main(): Promise<void> {
  const options = parseLandingOptions(process.argv.slice(2));
  if (typeof options === 'string') {
    process.stderr.write(`bench:landing: ${options}\n`);
    process.exitCode = 2;
    return;
  }
  const measured = commitMeasured();
  const at = new Date().toISOString();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-landing-market-'));
  const loads: LoadFigures[] = [];
  const weather = weatherFor(options.warmSeconds, options.sendSeconds, SLOT_MS);
  log(describeWeather(weather));
  try {
    for (const load of options.loads) {
      const figures = await measureLoad(load, weather, options, work);
      loads.push(figures);
      process.stdout.write(landingMarketTable({ loads: [figures], withinSlots: WITHIN_SLOTS }));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const market: LandingMarket = {
    commit: measured.commit,
    uncommittedChanges: measured.dirty,
    at,
    mode: options.quick ? 'quick' : 'default',
    slotMs: SLOT_MS,
    withinSlots: WITHIN_SLOTS,
    probability: PROBABILITY,
    loads,
    targets: targetChecks(loads),
  };
  process.stdout.write("\nTargets at load 2 (the issue's):\n");
  for (const check of market.targets)
    process.stdout.write(
      `  ${check.met === true ? 'met   ' : check.met === false ? 'MISSED' : 'n/a   '}  ${check.name}: ${check.detail}\n`,
    );
  const dir = path.resolve(__dirname, '../../bench/results');
  mergeIntoLatest(path.join(dir, 'latest.json'), market);
  fs.writeFileSync(path.join(dir, 'landing-market.svg'), landingMarketChart(market));
  process.stdout.write(`wrote landing.market and the landing_2x_* figures into ${path.join(dir, 'latest.json')}, and landing-market.svg\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench:landing failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
