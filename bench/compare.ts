/**
 * `npm run bench:compare -- --base REV`: one change measured before and after in the same
 * session. Builds REV in a worktree of its own (sharing node_modules), starts a gateway from
 * each build (sink upstream), and loads them in alternating rounds (base, this tree, this
 * tree, base, …) with the same pre-signed transactions, so that the machine's mood falls on
 * both. Reports each round's CPU time per request and the medians: a difference smaller than
 * the rounds' spread is no difference.
 *
 *   --base REV        the build to compare against (default HEAD)
 *   --rounds N        rounds per build (default 4)
 *   --seconds S       full load per round (default 6)
 *   --extra "ARGS"    more `serve` flags for both, e.g. "--verify-signatures false"
 *   --flags "FLAGS"   Node.js flags for this tree's gateway only (e.g. a V8 heap setting)
 *   --this "ARGS"     more `serve` flags for this tree's gateway only (e.g. a setting's other value)
 *   --rate R          an open loop at R requests/s instead of full load (what a request costs, and
 *                     its p99, at a share of capacity: fewer requests share each turn of the loop)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bodies } from './core-runs';
import { runLoad } from './load';
import { median } from './median';
import { createLatencyRecorder, openLoopPool, runOpenLoop } from './open-loop';
import { cpuMicros } from './proc-cpu';
import { startSlipwayAt, type ServerProcess } from './processes';
import { newSigner, pregenerate, transferFactory } from './signed-transactions';

const ROOT = path.resolve(__dirname, '../..');

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
}

/** REV checked out and built beside this tree, sharing its node_modules: its root. */
function buildBase(rev: string, work: string): string {
  const root = path.join(work, 'base');
  execFileSync('git', ['worktree', 'add', '--detach', root, rev], { cwd: ROOT, stdio: 'ignore' });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  giveNativeVerifier(rev, root);
  return root;
}

/**
 * The base's native ed25519 verifier, where it has one: this tree's build when the sources
 * are the same (no minute and a half of compiling), else built in its worktree. Without it
 * the base would verify with libsodium and the comparison would measure that instead.
 */
function giveNativeVerifier(rev: string, root: string): void {
  const native = 'native/ed25519';
  if (!fs.existsSync(path.join(root, native))) return;
  const same = (() => {
    try {
      execFileSync('git', ['diff', '--quiet', rev, '--', native], { cwd: ROOT, stdio: 'ignore' });
      return fs.existsSync(path.join(ROOT, native, 'build/Release'));
    } catch {
      return false;
    }
  })();
  if (same) fs.symlinkSync(path.join(ROOT, native, 'build'), path.join(root, native, 'build'));
  else execFileSync('sh', [path.join(root, 'scripts/build-native.sh')], { cwd: root, stdio: 'inherit' });
}

async function main(): Promise<void> {
  const rev = option('--base', 'HEAD');
  const rounds = Number(option('--rounds', '4'));
  const seconds = Number(option('--seconds', '6'));
  const extra = option('--extra', '').split(' ').filter(Boolean);
  const flags = option('--flags', '').split(' ').filter(Boolean);
  const thisExtra = option('--this', '').split(' ').filter(Boolean);
  const rate = Number(option('--rate', '0'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-compare-'));
  const servers: ServerProcess[] = [];
  try {
    const baseRoot = buildBase(rev, work);
    const payer = newSigner();
    const pool = pregenerate(transferFactory(payer, newSigner().publicKey, Buffer.alloc(32, 7)), 9_000 * seconds * rounds * 2 + 40_000);
    const builds = [
      {
        name: `base (${rev})`,
        root: baseRoot,
        flags: [] as string[],
        extra: [] as string[],
        cpu: [] as number[],
        rps: [] as number[],
        p99: [] as number[],
      },
      {
        name: `this tree ${[...flags, ...thisExtra].join(' ')}`,
        root: ROOT,
        flags,
        extra: thisExtra,
        cpu: [] as number[],
        rps: [] as number[],
        p99: [] as number[],
      },
    ];
    for (const build of builds) {
      servers.push(
        await startSlipwayAt(
          build.root,
          path.join(work, `data-${servers.length}`),
          ['--upstream', 'sink', ...extra, ...build.extra],
          build.flags,
        ),
      );
    }
    /** An open loop at `rate`: the server's CPU a request, and the p99 in ms (timed from when each request was due). */
    const atRate = async (server: ServerProcess, durationS: number) => {
      const connections = openLoopPool(server.url, 32);
      const recorder = createLatencyRecorder();
      const before = cpuMicros(server.pid);
      const options = { url: server.url, path: '/', headers: { 'x-api-key': server.key! }, nextBody: bodies('sendTransaction', pool.next) };
      const result = await runOpenLoop({ ...options, rate, durationMs: durationS * 1000, connections: 32 }, recorder, connections);
      const cpu = cpuMicros(server.pid) - before;
      await connections.close();
      return { cpuUsPerRequest: cpu / Math.max(1, result.ok), rps: result.achievedRate, failed: result.failed, p99Ms: result.p99 / 1000 };
    };
    const load = (server: ServerProcess, durationS: number, pid?: number) =>
      rate > 0
        ? atRate(server, durationS)
        : runLoad({
            url: server.url,
            path: '/',
            headers: { 'x-api-key': server.key! },
            nextBody: bodies('sendTransaction', pool.next),
            connections: 32,
            durationS,
            ...(pid === undefined ? {} : { pid }),
          });
    for (const server of servers) await load(server, 2);
    /** This tree's cost over the base's, for each two neighbouring rounds (one of each): the machine's drift cancels within a pair. */
    const pairs: number[] = [];
    let previous = NaN;
    for (let round = 0; round < rounds * 2; round++) {
      const which = [0, 1, 1, 0][round % 4]!;
      const result = await load(servers[which]!, seconds, servers[which]!.pid);
      if (round % 2 === 1) pairs.push(which === 1 ? result.cpuUsPerRequest! / previous : previous / result.cpuUsPerRequest!);
      previous = result.cpuUsPerRequest!;
      if (result.failed > 0) process.stdout.write(`  (${result.failed} answers were not successes)\n`);
      builds[which]!.cpu.push(result.cpuUsPerRequest!);
      builds[which]!.rps.push(result.rps);
      const p99 = 'p99Ms' in result ? result.p99Ms : undefined;
      if (p99 !== undefined) builds[which]!.p99.push(p99);
      process.stdout.write(
        `  ${builds[which]!.name.padEnd(24)} ${result.cpuUsPerRequest!.toFixed(1).padStart(6)} µs/req  ${Math.round(result.rps)} req/s${p99 === undefined ? '' : `  p99 ${p99.toFixed(1)} ms`}\n`,
      );
    }
    process.stdout.write(
      `\nCPU µs a request (median, min–max), ${extra.join(' ') || 'everything on'}${rate > 0 ? `, open loop at ${rate} requests/s` : ''}:\n`,
    );
    for (const b of builds) {
      process.stdout.write(
        `  ${b.name.padEnd(24)} ${median(b.cpu).toFixed(1).padStart(6)}  (${Math.min(...b.cpu).toFixed(1)}–${Math.max(...b.cpu).toFixed(1)})  ${Math.round(median(b.rps))} req/s` +
          (b.p99.length > 0
            ? `  p99 ${median(b.p99).toFixed(1)} ms (${Math.min(...b.p99).toFixed(1)}–${Math.max(...b.p99).toFixed(1)})`
            : '') +
          '\n',
      );
    }
    process.stdout.write(`  this tree / base        ${(median(builds[1]!.cpu) / median(builds[0]!.cpu)).toFixed(3)}\n`);
    process.stdout.write(
      `  the same, pair by pair   ${median(pairs).toFixed(3)} (${Math.min(...pairs).toFixed(3)}–${Math.max(...pairs).toFixed(3)} over ${pairs.length} pairs)\n`,
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    execFileSync('git', ['worktree', 'remove', '--force', path.join(work, 'base')], { cwd: ROOT, stdio: 'ignore' });
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`compare failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
