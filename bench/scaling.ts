/**
 * `npm run bench:scaling`: what one machine reaches with one gateway process on SQLite (the
 * embedded shape) and with gateways sharing PostgreSQL and Redis (the cluster shape), and
 * what a request costs in each, counted in full: the gateway's CPU and, for the cluster, the
 * CPU PostgreSQL and Redis spend on it (store-cpu.ts). Each configuration gets the same full
 * load of sendTransaction (sink upstream, everything on), split evenly across its processes.
 *
 * The two shapes the issue compares (one process on SQLite with its default verification
 * threads; one process on PostgreSQL and Redis) are measured in alternating rounds, both
 * gateways running throughout, so that the machine's noise (other work on it) falls on both
 * alike; their figures are the rounds' medians, and the ratios are taken pair by pair
 * (round i's cluster over round i's embedded) with their median as the headline. The other
 * configurations run once each afterwards (`--pair` leaves them out).
 *
 * Needs PostgreSQL and Redis (SLIPWAY_BENCH_POSTGRES_URL, SLIPWAY_BENCH_REDIS_URL; the
 * machine's services by default). Writes bench/results/scaling.json, and `scaling` with
 * `cluster_cpu_per_request_vs_embedded` and `cluster_rps_vs_embedded` into latest.json.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { bodies } from './core-runs';
import { runLoad, type LoadResult } from './load';
import { commitMeasured, libsodiumVerifyMicros } from './machine-state';
import { machineTicks } from './proc-cpu';
import { startSlipway, type ServerProcess } from './processes';
import { newSigner, pregenerate, transferFactory } from './signed-transactions';
import { storeCpuMeter, type StoreCpuMeter } from './store-cpu';

const ROOT = path.resolve(__dirname, '../..');
const QUICK = process.argv.includes('--quick');
const PAIR_ONLY = process.argv.includes('--pair');
const SECONDS = QUICK ? 3 : 8;
const WARM_SECONDS = QUICK ? 1 : 2;
/** Alternating rounds of the two shapes compared. */
const ROUNDS = QUICK ? 2 : 5;
const CONNECTIONS = 32;
const POSTGRES_URL = process.env.SLIPWAY_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.SLIPWAY_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** The issue's targets: the cluster's CPU a request (gateway + PostgreSQL + Redis) at most this times the embedded one's… */
const CPU_TARGET = 1.5;
/** …and its requests/s at least this share of it. */
const RPS_TARGET = 0.5;

interface Configuration {
  readonly name: string;
  readonly processes: number;
  readonly verifyThreads: number;
  readonly shared: boolean;
  /** Of the shared stores, only this one (the cluster's cost taken apart). */
  readonly only?: 'postgres' | 'redis';
  /** The load's connections, when not CONNECTIONS (the embedded shape at about the cluster's rate). */
  readonly connections?: number;
}

const DEFAULT_THREADS = Math.max(1, os.cpus().length - 1);
const EMBEDDED: Configuration = {
  name: `one process on SQLite, ${DEFAULT_THREADS} verification thread${DEFAULT_THREADS === 1 ? '' : 's'} (the default here)`,
  processes: 1,
  verifyThreads: DEFAULT_THREADS,
  shared: false,
};
const CLUSTER: Configuration = { name: 'one process on PostgreSQL and Redis', processes: 1, verifyThreads: DEFAULT_THREADS, shared: true };
const OTHERS: Configuration[] = [
  { name: 'one process, verification on the request thread only', processes: 1, verifyThreads: 0, shared: false },
  ...[2, 4]
    .filter((threads) => threads <= DEFAULT_THREADS)
    .map((threads) => ({ name: `one process, ${threads} verification threads`, processes: 1, verifyThreads: threads, shared: false })),
  { name: 'two processes sharing PostgreSQL and Redis', processes: 2, verifyThreads: DEFAULT_THREADS, shared: true },
  // The cluster's cost taken apart: each store alone, and the embedded shape at about the
  // cluster's rate (a closed loop of fewer connections), where the work done once a turn
  // is spread over fewer requests.
  { name: 'one process on PostgreSQL alone (no Redis)', processes: 1, verifyThreads: DEFAULT_THREADS, shared: true, only: 'postgres' },
  { name: 'one process on SQLite with Redis', processes: 1, verifyThreads: DEFAULT_THREADS, shared: true, only: 'redis' },
  { name: 'one process on SQLite, 8 connections', processes: 1, verifyThreads: DEFAULT_THREADS, shared: false, connections: 8 },
];

/** One measured round of one configuration: CPU in µs a request. */
interface Round {
  readonly rps: number;
  readonly requests: number;
  readonly failed: number;
  readonly p99Ms: number;
  /** Each gateway process's own. */
  readonly gatewayUs: number[];
  readonly postgresUs: number;
  /** Of postgresUs: the gateway's backends; the rest is the server's shared processes (WAL writer, checkpointer, autovacuum). */
  readonly postgresBackendsUs: number;
  readonly redisUs: number;
  readonly totalUs: number;
  /** Other clients' PostgreSQL backends and Redis's commands over the round: is someone else using the services? */
  readonly otherPostgresClientsUs: number;
  readonly redisCommandsPerRequest: number;
  readonly machineBusyPct: number;
}

interface Measured {
  readonly configuration: Configuration;
  readonly rounds: Round[];
  /** Medians over the rounds. */
  readonly rps: number;
  readonly gatewayUs: number;
  readonly postgresUs: number;
  readonly redisUs: number;
  readonly totalUs: number;
  readonly p99Ms: number;
  readonly failed: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round1 = (n: number) => Math.round(n * 10) / 10;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** A configuration's gateways, running, and how to load them for a round. */
interface Running {
  readonly configuration: Configuration;
  round(): Promise<Round>;
  stop(): Promise<void>;
}

async function launch(configuration: Configuration, work: string): Promise<Running> {
  const id = crypto.randomBytes(4).toString('hex');
  const schema = `slipway_bench_${id}`;
  const prefix = `slipway-bench-${id}:`;
  const applicationName = `slipway-bench-${id}`;
  const usesPostgres = configuration.shared && configuration.only !== 'redis';
  const usesRedis = configuration.shared && configuration.only !== 'postgres';
  const env: Record<string, string> = {
    ...(usesPostgres ? { SLIPWAY_POSTGRES_URL: POSTGRES_URL, SLIPWAY_POSTGRES_SCHEMA: schema, PGAPPNAME: applicationName } : {}),
    ...(usesRedis ? { SLIPWAY_REDIS_URL: REDIS_URL, SLIPWAY_REDIS_KEY_PREFIX: prefix } : {}),
  };
  const servers: ServerProcess[] = [];
  let meter: StoreCpuMeter | undefined;
  const stop = async () => {
    for (const server of servers) await server.stop();
    await meter?.close();
    if (configuration.shared) {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      // In slices: a round leaves a key a request, more than one call's arguments may hold.
      for (let i = 0; i < keys.length; i += 1_000) await redis.unlink(...keys.slice(i, i + 1_000));
      await redis.quit();
    }
  };
  try {
    for (let i = 0; i < configuration.processes; i++) {
      const args = ['--upstream', 'sink', '--verify-threads', String(configuration.verifyThreads)];
      servers.push(await startSlipway(path.join(work, `${schema}-${i}`), args, env));
    }
    if (configuration.shared) meter = await storeCpuMeter(POSTGRES_URL, REDIS_URL, applicationName);
  } catch (error) {
    await stop();
    throw error;
  }
  // One key for all: the first process printed it (the key store is shared).
  const key = servers[0]!.key!;
  const payer = newSigner();
  const next = transferFactory(payer, newSigner().publicKey, Buffer.alloc(32, 7));
  const pools = servers.map(() => pregenerate(next, Math.ceil((12_000 * (SECONDS + WARM_SECONDS)) / servers.length)));
  const load = (seconds: number, withPid: boolean) =>
    Promise.all(
      servers.map((server, i) =>
        runLoad({
          url: server.url,
          path: '/',
          headers: { 'x-api-key': key },
          nextBody: bodies('sendTransaction', pools[i]!.next),
          durationS: seconds,
          connections: Math.ceil((configuration.connections ?? CONNECTIONS) / servers.length),
          ...(withPid ? { pid: server.pid } : {}),
        }),
      ),
    );
  return {
    configuration,
    stop,
    async round() {
      await load(WARM_SECONDS, false);
      const before = machineTicks();
      await meter?.start();
      const results: LoadResult[] = await load(SECONDS, true);
      const stores = await meter?.end();
      const after = machineTicks();
      // Enough signed for the next round if it is a little faster than this one.
      for (const pool of pools) pool.refill(1.3);
      const requests = results.reduce((sum, r) => sum + r.requests, 0);
      const gatewayUs = results.map((r) => r.cpuUsPerRequest ?? NaN);
      const gatewayTotal = results.reduce((sum, r) => sum + (r.cpuUsPerRequest ?? NaN) * r.requests, 0) / requests;
      const postgresUs = (stores?.postgresUs ?? 0) / requests;
      const redisUs = (stores?.redisUs ?? 0) / requests;
      return {
        rps: results.reduce((sum, r) => sum + r.rps, 0),
        requests,
        failed: results.reduce((sum, r) => sum + r.failed, 0),
        p99Ms: Math.max(...results.map((r) => r.latencyMs.p99)),
        gatewayUs,
        postgresUs,
        postgresBackendsUs: (stores?.postgresBackendsUs ?? 0) / requests,
        redisUs,
        totalUs: gatewayTotal + postgresUs + redisUs,
        otherPostgresClientsUs: stores?.otherPostgresClientsUs ?? 0,
        redisCommandsPerRequest: (stores?.redisCommands ?? 0) / requests,
        machineBusyPct: (1 - (after.idle - before.idle) / (after.total - before.total)) * 100,
      };
    },
  };
}

function summarise(configuration: Configuration, rounds: Round[]): Measured {
  return {
    configuration,
    rounds,
    rps: median(rounds.map((r) => r.rps)),
    gatewayUs: median(rounds.map((r) => r.totalUs - r.postgresUs - r.redisUs)),
    postgresUs: median(rounds.map((r) => r.postgresUs)),
    redisUs: median(rounds.map((r) => r.redisUs)),
    totalUs: median(rounds.map((r) => r.totalUs)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    failed: rounds.reduce((sum, r) => sum + r.failed, 0),
  };
}

function table(measured: Measured[]): string[] {
  const lines = [
    '                                                              requests/s  p99 ms  gateway µs  PostgreSQL µs  Redis µs  total µs/req  busy %  failed',
  ];
  for (const m of measured) {
    lines.push(
      `  ${m.configuration.name.padEnd(58)}${Math.round(m.rps).toLocaleString('en-US').padStart(12)}${String(m.p99Ms).padStart(8)}` +
        `${m.gatewayUs.toFixed(0).padStart(12)}${m.postgresUs.toFixed(0).padStart(15)}${m.redisUs.toFixed(0).padStart(10)}` +
        `${m.totalUs.toFixed(0).padStart(14)}${median(m.rounds.map((r) => r.machineBusyPct))
          .toFixed(0)
          .padStart(8)}${String(m.failed).padStart(8)}`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-scaling-'));
  const measured = commitMeasured();
  const startedAt = new Date().toISOString();
  const load = os.loadavg();
  const libsodiumVerifyUs = libsodiumVerifyMicros();
  try {
    const embedded: Round[] = [];
    const cluster: Round[] = [];
    const both: Running[] = [];
    try {
      both.push(await launch(EMBEDDED, work));
      both.push(await launch(CLUSTER, work));
      for (let i = 0; i < ROUNDS; i++) {
        // ABBA order: neither shape always goes first after a rest.
        const order = i % 2 === 0 ? both : [...both].reverse();
        for (const running of order) {
          process.stderr.write(`round ${i + 1}/${ROUNDS}: ${running.configuration.name} (${WARM_SECONDS} + ${SECONDS} s)\n`);
          (running === both[0] ? embedded : cluster).push(await running.round());
        }
      }
    } finally {
      for (const running of both) await running.stop().catch((error: unknown) => process.stderr.write(`cleaning up: ${String(error)}\n`));
    }
    const results = [summarise(EMBEDDED, embedded), summarise(CLUSTER, cluster)];
    if (!PAIR_ONLY) {
      for (const configuration of OTHERS) {
        process.stderr.write(`${configuration.name} (${WARM_SECONDS} + ${SECONDS} s)\n`);
        const running = await launch(configuration, work);
        try {
          results.push(summarise(configuration, [await running.round()]));
        } finally {
          await running.stop();
        }
      }
    }
    const cpuPairs = cluster.map((c, i) => c.totalUs / embedded[i]!.totalUs);
    const rpsPairs = cluster.map((c, i) => c.rps / embedded[i]!.rps);
    const cpuRatio = round3(median(cpuPairs));
    const rpsRatio = round3(median(rpsPairs));
    const baseline = results[0]!;
    const lines = [
      `Scaling on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, at ${measured.commit.slice(0, 12)}${measured.dirty ? ' (uncommitted changes)' : ''}; ` +
        `load average ${load.map((l) => l.toFixed(2)).join(' ')} at the start; libsodium verify ${libsodiumVerifyUs.toFixed(1)} µs; the load generator shares the machine`,
      `The first two: medians of ${ROUNDS} alternating rounds of ${SECONDS} s; the others one round each`,
      '',
      ...table(results),
      '',
      `cluster CPU a request vs embedded: ${cpuRatio} (pairs ${cpuPairs.map((r) => r.toFixed(2)).join(', ')}; target ≤ ${CPU_TARGET}: ${cpuRatio <= CPU_TARGET ? 'met' : 'MISSED'}), ` +
        `against the embedded ${baseline.totalUs.toFixed(1)} µs a request`,
      `cluster requests/s vs embedded: ${rpsRatio} (pairs ${rpsPairs.map((r) => r.toFixed(2)).join(', ')}; target ≥ ${RPS_TARGET}: ${rpsRatio >= RPS_TARGET ? 'met' : 'MISSED'}), ` +
        `against the embedded ${Math.round(baseline.rps).toLocaleString('en-US')} requests/s`,
      `PostgreSQL's share in the gateway's backends: ${cluster.map((r) => `${r.postgresBackendsUs.toFixed(0)} of ${r.postgresUs.toFixed(0)} µs`).join(', ')}`,
      `other clients' PostgreSQL backends used ${cluster.map((r) => (r.otherPostgresClientsUs / 1000).toFixed(0)).join(', ')} ms of CPU in the cluster rounds; ` +
        `Redis ran ${cluster.map((r) => r.redisCommandsPerRequest.toFixed(2)).join(', ')} commands a request`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
    const scaling = {
      commit: measured.commit,
      uncommittedChanges: measured.dirty,
      startedAt,
      endedAt: new Date().toISOString(),
      mode: QUICK ? 'quick' : 'default',
      cores: os.cpus().length,
      loadAverageAtStart: load.map(round3),
      libsodiumVerifyUs: round1(libsodiumVerifyUs),
      rounds: ROUNDS,
      secondsPerRound: SECONDS,
      embeddedCpuUsPerRequest: round1(baseline.totalUs),
      embeddedRps: Math.round(baseline.rps),
      cluster_cpu_per_request_vs_embedded: cpuRatio,
      cluster_rps_vs_embedded: rpsRatio,
      pairs: { cpu: cpuPairs.map(round3), rps: rpsPairs.map(round3) },
      targets: { cpuMax: CPU_TARGET, rpsMin: RPS_TARGET, cpuMet: cpuRatio <= CPU_TARGET, rpsMet: rpsRatio >= RPS_TARGET },
      measured: results,
    };
    const dir = path.join(ROOT, 'bench/results');
    fs.writeFileSync(path.join(dir, 'scaling.json'), JSON.stringify(scaling, null, 2) + '\n');
    if (!QUICK) mergeIntoLatest(path.join(dir, 'latest.json'), scaling);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** `scaling` and its two headline ratios at the top of latest.json; every other figure is kept. */
function mergeIntoLatest(
  file: string,
  scaling: { cluster_cpu_per_request_vs_embedded: number; cluster_rps_vs_embedded: number } & Record<string, unknown>,
): void {
  const latest = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  const merged = {
    ...latest,
    scaling,
    cluster_cpu_per_request_vs_embedded: scaling.cluster_cpu_per_request_vs_embedded,
    cluster_rps_vs_embedded: scaling.cluster_rps_vs_embedded,
  };
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(merged, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`scaling failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
