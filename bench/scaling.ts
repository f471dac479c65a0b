/**
 * `npm run bench:scaling`: what one machine reaches with one gateway process and its
 * verification threads, and with several processes sharing PostgreSQL and Redis (the
 * supported way to use more cores), so that an operator can size a machine. Each
 * configuration gets the same full load of sendTransaction (sink upstream, everything on),
 * split evenly across its processes; reported: requests/s in all, each process's CPU time per
 * request, and how busy the whole machine was (the load generator runs on it too).
 * Needs PostgreSQL and Redis (SLIPWAY_BENCH_POSTGRES_URL, SLIPWAY_BENCH_REDIS_URL; the
 * machine's services by default). Writes bench/results/scaling.json.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { bodies } from './core-runs';
import { runLoad, type LoadResult } from './load';
import { machineTicks } from './proc-cpu';
import { startSlipway, type ServerProcess } from './processes';
import { newSigner, pregenerate, transferFactory } from './signed-transactions';

const ROOT = path.resolve(__dirname, '../..');
const QUICK = process.argv.includes('--quick');
const SECONDS = QUICK ? 3 : 10;
const CONNECTIONS = 32;
const POSTGRES_URL = process.env.SLIPWAY_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.SLIPWAY_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

interface Configuration {
  readonly name: string;
  readonly processes: number;
  readonly verifyThreads: number;
  readonly shared: boolean;
}

const DEFAULT_THREADS = Math.max(1, os.cpus().length - 1);
const CONFIGURATIONS: Configuration[] = [
  { name: 'one process, verification on the request thread only', processes: 1, verifyThreads: 0, shared: false },
  ...[1, 2, 4]
    .filter((threads) => threads <= DEFAULT_THREADS)
    .map((threads) => ({
      name: `one process, ${threads} verification thread${threads === 1 ? '' : 's'}${threads === DEFAULT_THREADS ? ' (the default here)' : ''}`,
      processes: 1,
      verifyThreads: threads,
      shared: false,
    })),
  { name: 'one process on PostgreSQL and Redis', processes: 1, verifyThreads: DEFAULT_THREADS, shared: true },
  { name: 'two processes sharing PostgreSQL and Redis', processes: 2, verifyThreads: DEFAULT_THREADS, shared: true },
];

interface Measured {
  readonly configuration: Configuration;
  readonly rps: number;
  readonly failed: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number[];
  readonly machineBusyPct: number;
}

async function measure(configuration: Configuration, work: string): Promise<Measured> {
  const schema = `slipway_bench_${crypto.randomBytes(4).toString('hex')}`;
  const prefix = `slipway-bench-${crypto.randomBytes(4).toString('hex')}:`;
  const env: Record<string, string> = configuration.shared
    ? {
        SLIPWAY_POSTGRES_URL: POSTGRES_URL,
        SLIPWAY_POSTGRES_SCHEMA: schema,
        SLIPWAY_REDIS_URL: REDIS_URL,
        SLIPWAY_REDIS_KEY_PREFIX: prefix,
      }
    : {};
  const servers: ServerProcess[] = [];
  try {
    for (let i = 0; i < configuration.processes; i++) {
      const args = ['--upstream', 'sink', '--verify-threads', String(configuration.verifyThreads)];
      servers.push(await startSlipway(path.join(work, `${schema}-${i}`), args, env));
    }
    // One key for all: the first process printed it (the key store is shared).
    const key = servers[0]!.key!;
    const payer = newSigner();
    const next = transferFactory(payer, newSigner().publicKey, Buffer.alloc(32, 7));
    const pools = servers.map(() => pregenerate(next, Math.ceil((8_000 * (SECONDS + 2)) / servers.length)));
    const load = (seconds: number, withPid: boolean) =>
      Promise.all(
        servers.map((server, i) =>
          runLoad({
            url: server.url,
            path: '/',
            headers: { 'x-api-key': key },
            nextBody: bodies('sendTransaction', pools[i]!.next),
            durationS: seconds,
            connections: Math.ceil(CONNECTIONS / servers.length),
            ...(withPid ? { pid: server.pid } : {}),
          }),
        ),
      );
    await load(2, false);
    const before = machineTicks();
    const results: LoadResult[] = await load(SECONDS, true);
    const after = machineTicks();
    return {
      configuration,
      rps: results.reduce((sum, r) => sum + r.rps, 0),
      failed: results.reduce((sum, r) => sum + r.failed, 0),
      p99Ms: Math.max(...results.map((r) => r.latencyMs.p99)),
      cpuUsPerRequest: results.map((r) => r.cpuUsPerRequest ?? NaN),
      machineBusyPct: (1 - (after.idle - before.idle) / (after.total - before.total)) * 100,
    };
  } finally {
    for (const server of servers) await server.stop();
    if (configuration.shared) {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  }
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-scaling-'));
  try {
    const measured: Measured[] = [];
    for (const configuration of CONFIGURATIONS) {
      process.stderr.write(`${configuration.name} (${SECONDS} s)\n`);
      measured.push(await measure(configuration, work));
    }
    const lines = [
      `Scaling on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; the load generator shares the machine`,
      '',
    ];
    lines.push('                                                         requests/s   p99 ms   CPU µs/req each   machine busy %   failed');
    for (const m of measured) {
      lines.push(
        `  ${m.configuration.name.padEnd(55)}${Math.round(m.rps).toLocaleString('en-US').padStart(10)}${String(m.p99Ms).padStart(9)}` +
          `${m.cpuUsPerRequest
            .map((c) => c.toFixed(0))
            .join(' + ')
            .padStart(18)}${m.machineBusyPct.toFixed(0).padStart(17)}${String(m.failed).padStart(9)}`,
      );
    }
    const out = lines.join('\n') + '\n';
    process.stdout.write(out);
    fs.writeFileSync(
      path.join(ROOT, 'bench/results/scaling.json'),
      JSON.stringify({ at: new Date().toISOString(), cores: os.cpus().length, measured }, null, 2) + '\n',
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`scaling failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
