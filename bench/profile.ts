/**
 * `npm run bench:profile`: where a sendTransaction's CPU time goes. Starts Slipway (sink
 * upstream, everything on, and again with verification off) under `--cpu-prof`, loads it at
 * full speed for a while, stops it, and sums the request thread's profile by function (self
 * time) and by source file: bench/results/profile.txt, quoted in docs/PERFORMANCE.md.
 * `--cluster`: the gateway on PostgreSQL and Redis instead (bench/results/profile-cluster.txt).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { bodies } from './core-runs';
import { runLoad } from './load';
import { threadMicros } from './proc-cpu';
import { startSlipway } from './processes';
import { newSigner, pregenerate, transferFactory } from './signed-transactions';

const ROOT = path.resolve(__dirname, '../..');
const SECONDS = process.argv.includes('--quick') ? 3 : 10;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function and per file, as shares of the samples, from a .cpuprofile. */
export function summarize(profile: Profile, top = Number(process.env.PROFILE_TOP ?? 25)): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const file = url === '' ? '(native/idle)' : url.replace(`file://${ROOT}/`, '').replace(/^.*node_modules\//, 'node_modules/');
    const name = `${functionName || '(anonymous)'}  ${file}${url === '' ? '' : `:${lineNumber + 1}`}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const group = file.startsWith('node_modules/')
      ? file.split('/').slice(0, 2).join('/')
      : file.startsWith('node:')
        ? 'node: internals'
        : file;
    byFile.set(group, (byFile.get(group) ?? 0) + us);
  }
  const rows = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => `  ${((us / total) * 100).toFixed(1).padStart(5)} %  ${name}`)
      .join('\n');
  return `By function (self time):\n${rows(byFunction)}\n\nBy file or package:\n${rows(byFile)}\n`;
}

async function profileOne(label: string, extra: string[], env: Record<string, string> = {}): Promise<string> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-profile-'));
  try {
    const profiles = path.join(work, 'profiles');
    const payer = newSigner();
    const pool = pregenerate(transferFactory(payer, newSigner().publicKey, Buffer.alloc(32, 7)), 6_000 * (SECONDS + 2));
    const server = await startSlipway(path.join(work, 'data'), ['--upstream', 'sink', ...extra], env, undefined, [
      '--cpu-prof',
      `--cpu-prof-dir=${profiles}`,
    ]);
    const options = {
      url: server.url,
      path: '/',
      headers: { 'x-api-key': server.key! },
      nextBody: bodies('sendTransaction', pool.next),
      connections: 32,
    };
    await runLoad({ ...options, durationS: 2 });
    const before = new Map(threadMicros(server.pid).map((t) => [t.tid, t.micros]));
    const load = await runLoad({ ...options, durationS: SECONDS, pid: server.pid });
    const byThread = new Map<string, number>();
    for (const t of threadMicros(server.pid)) {
      // The request thread is the process's own id; the others are named by the runtime (workers all "node").
      const name = t.tid === server.pid ? 'the request thread' : `${t.name} (thread ${t.tid})`;
      byThread.set(name, (byThread.get(name) ?? 0) + t.micros - (before.get(t.tid) ?? 0));
    }
    const threads = [...byThread.entries()]
      .filter(([, us]) => us > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => `  ${(us / load.requests).toFixed(1).padStart(7)} µs  ${name}`)
      .join('\n');
    await server.stop();
    // The request thread's profile is the largest (verification threads write their own).
    const files = fs.readdirSync(profiles).map((f) => path.join(profiles, f));
    const main = files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
    if (main === undefined) throw new Error(`no profile was written: ${server.stderr()}`);
    const profile = JSON.parse(fs.readFileSync(main, 'utf8')) as Profile;
    return (
      `## sendTransaction, ${label}: ${Math.round(load.rps)} requests/s, ${load.cpuUsPerRequest?.toFixed(1)} µs CPU a request (all threads); ` +
      `the request thread's profile over warm-up and load\n\nCPU a request by thread:\n${threads}\n\n${summarize(profile)}`
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The cluster shape: on the machine's PostgreSQL and Redis (as bench:scaling), in a schema and key prefix of its own. */
async function profileCluster(): Promise<string> {
  const id = crypto.randomBytes(4).toString('hex');
  const postgresUrl = process.env.SLIPWAY_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `slipway_profile_${id}`;
  try {
    return await profileOne('everything on, on PostgreSQL and Redis', [], {
      SLIPWAY_POSTGRES_URL: postgresUrl,
      SLIPWAY_POSTGRES_SCHEMA: schema,
      SLIPWAY_REDIS_URL: process.env.SLIPWAY_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
      SLIPWAY_REDIS_KEY_PREFIX: `slipway-profile-${id}:`,
    });
  } finally {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
  }
}

async function main(): Promise<void> {
  const out = [
    `Profiled ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} cores`,
    '',
    ...(process.argv.includes('--cluster')
      ? [await profileCluster()]
      : [await profileOne('everything on', []), await profileOne('signature verification off', ['--verify-signatures', 'false'])]),
  ].join('\n');
  const file = path.join(ROOT, `bench/results/${process.argv.includes('--cluster') ? 'profile-cluster' : 'profile'}.txt`);
  fs.writeFileSync(file, out);
  process.stdout.write(`${out}\nwrote ${file}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`profile failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
