/**
 * The image as it runs, from its exported filesystem (scripts/image-test.sh builds the image,
 * exports a container of it into ROOTFS and writes `podman image inspect` into INSPECT; this
 * runs the rest). The image's own entrypoint and command run under `unshare` (mount and PID
 * namespaces: it is PID 1, as in a container) and `chroot`, as the image's user, with the
 * image's environment and working directory, its /data as the data directory, and nothing of
 * this machine inside but /proc and /dev. It is one of a cluster: PostgreSQL and Redis on
 * loopback (a schema and a key prefix of its own), `bin/slipway ledger` from this checkout
 * as its RPC node and block engine. A signed transfer is sent through it, lands, and is read
 * back (getSubmissionStatuses, getSignatureStatuses through the gateway); the image's health
 * check passes while it runs and fails once it stopped; SIGTERM ends it with status 0.
 *
 * Before running, what the image holds: no compiler, make or python, no package only the
 * devDependencies need, /data
 * the user's and 0700, and the entrypoint the one the Containerfile and deploy/compose.yaml
 * name (compose-file.test.ts checks those two agree).
 *
 * Usage (as root): node dist/test/deploy/image-run.js ROOTFS INSPECT_JSON. Exits 1 saying
 * what failed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { createSlipwayClient } from '../../src/client';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { SLIPWAY } from '../helpers/process';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { post } from '../helpers/rpc';
import { until } from '../helpers/until';
import { containerfileImage } from './containerfile';

const ROOT = path.resolve(__dirname, '../../..');
/** Programs that build, which the runtime stage must not hold. */
const BUILD_TOOLS = ['cc', 'gcc', 'g++', 'c++', 'clang', 'make', 'python', 'python3', 'node-gyp'];
const START_TIMEOUT_MS = 30_000;
const LAND_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;

interface ImageConfig {
  readonly User: string;
  readonly Env: string[];
  readonly Entrypoint: string[];
  readonly Cmd: string[];
  readonly WorkingDir: string;
  readonly ExposedPorts?: Record<string, unknown>;
  readonly Volumes?: Record<string, unknown>;
  readonly Healthcheck?: { Test: string[] };
}

/** Lines a child process printed, and a wait for the first that matches. */
function linesOf(
  child: ChildProcess,
  stream: 'stdout' | 'stderr',
): { lines: string[]; match(re: RegExp, ms: number): Promise<RegExpExecArray> } {
  const lines: string[] = [];
  const waiting: { re: RegExp; resolve(m: RegExpExecArray): void }[] = [];
  readline.createInterface({ input: child[stream]! }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiting]) {
      const m = w.re.exec(line);
      if (m) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  return {
    lines,
    match: (re, ms) =>
      new Promise((resolve, reject) => {
        const found = lines.map((l) => re.exec(l)).find((m) => m !== null);
        if (found) return resolve(found);
        const timer = setTimeout(() => reject(new Error(`no line matching ${re} within ${ms} ms`)), ms);
        child.once('exit', (code) => reject(new Error(`exited (${code}) before a line matching ${re}`)));
        waiting.push({ re, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      }),
  };
}

/** A TCP port free on loopback now, whose next port is free too (WebSocket subscriptions take port + 1). */
async function freePortPair(): Promise<number> {
  const listen = (port: number) =>
    new Promise<net.Server | null>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(null));
      server.listen(port, '0.0.0.0', () => resolve(server));
    });
  for (;;) {
    const first = (await listen(0))!;
    const port = (first.address() as net.AddressInfo).port;
    const second = await listen(port + 1);
    await new Promise((r) => first.close(r));
    if (second !== null) {
      await new Promise((r) => second.close(r));
      return port;
    }
  }
}

/** The uid and gid the image runs as, from its USER (numbers, or names in its /etc/passwd). */
function imageUser(rootfs: string, user: string): { uid: number; gid: number } {
  const [name, group] = user.split(':') as [string, string | undefined];
  const passwd = fs
    .readFileSync(path.join(rootfs, 'etc/passwd'), 'utf8')
    .split('\n')
    .map((l) => l.split(':'));
  const entry = passwd.find((p) => p[0] === name || p[2] === name);
  const uid = /^\d+$/.test(name) ? Number(name) : Number(entry?.[2]);
  const gid = group !== undefined && /^\d+$/.test(group) ? Number(group) : Number(entry?.[3]);
  assert.ok(Number.isInteger(uid) && Number.isInteger(gid), `the image's user ${user} is not in its /etc/passwd`);
  return { uid, gid };
}

/** Checks what the image holds, before running it. */
function checkContents(rootfs: string, config: ImageConfig): { uid: number; gid: number } {
  const declared = containerfileImage(fs.readFileSync(path.join(ROOT, 'Containerfile'), 'utf8'));
  assert.deepEqual(config.Entrypoint, declared.entrypoint, "the image's entrypoint is the Containerfile's");
  assert.deepEqual(config.Cmd, declared.cmd, "the image's command is the Containerfile's");
  assert.deepEqual(
    config.Healthcheck?.Test,
    ['CMD', ...declared.healthcheck],
    'the image has the health check (build with --format docker)',
  );
  assert.ok(config.Volumes !== undefined && '/data' in config.Volumes, '/data is a volume');
  assert.ok(config.ExposedPorts !== undefined && '8080/tcp' in config.ExposedPorts, '8080 is exposed');
  const user = imageUser(rootfs, config.User);
  assert.notEqual(user.uid, 0, 'the image runs as a user other than root');
  const data = fs.statSync(path.join(rootfs, 'data'));
  assert.equal(data.uid, user.uid, "/data belongs to the image's user");
  assert.equal(data.mode & 0o777, 0o700, '/data is 0700');
  const tools = ['usr/bin', 'usr/local/bin', 'bin', 'usr/sbin']
    .flatMap((dir) => BUILD_TOOLS.map((tool) => path.join(dir, tool)))
    .filter((file) => fs.existsSync(path.join(rootfs, file)));
  assert.deepEqual(tools, [], 'the runtime holds no compiler, make or python');
  // The lockfile marks `dev` what only devDependencies need (a devDependency that a production
  // dependency needs too, such as semver, is not marked and stays).
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const devInstalled = Object.entries(lock.packages)
    .filter(([where, entry]) => entry.dev === true && fs.existsSync(path.join(rootfs, 'opt/slipway', where)))
    .map(([where]) => where);
  assert.deepEqual(devInstalled, [], 'the runtime holds no devDependency');
  return user;
}

/** A command run inside the image's filesystem, as its user, in new mount and PID namespaces. */
function inImage(rootfs: string, user: { uid: number; gid: number }, workdir: string, command: string[], env: Record<string, string>) {
  const script =
    'root=$0 user=$1 workdir=$2 && shift 2 && mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" && exec chroot --userspec="$user" "$root" /usr/bin/env -C "$workdir" "$@"';
  return spawn(
    'unshare',
    ['--mount', '--pid', '--fork', '--kill-child', '--', 'sh', '-c', script, rootfs, `${user.uid}:${user.gid}`, workdir, ...command],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    },
  );
}

/** The image's process: the child unshare forked (PID 1 inside). */
function pidOneOf(unsharePid: number): number {
  const children = fs.readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/);
  assert.equal(children.length, 1, 'unshare has one child');
  return Number(children[0]);
}

async function main(rootfs: string, inspectFile: string): Promise<void> {
  const inspected = JSON.parse(fs.readFileSync(inspectFile, 'utf8')) as { Config: ImageConfig; Healthcheck?: ImageConfig['Healthcheck'] }[];
  // podman shows the health check beside the configuration, docker inside it.
  const config = { ...inspected[0]!.Config, Healthcheck: inspected[0]!.Config.Healthcheck ?? inspected[0]!.Healthcheck };
  const user = checkContents(rootfs, config);
  process.stdout.write(
    `image-run: the image holds what it should (user ${user.uid}:${user.gid}, /data 0700, no toolchain, no devDependency)\n`,
  );

  const { schema, drop } = testSchema();
  const { prefix, clean } = testRedisPrefix();
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-image-ledger-'));
  const ledger = spawn(SLIPWAY, ['ledger', '--port', '0', '--data-dir', ledgerDir, '--slot-ms', '100', '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let gateway: ChildProcess | undefined;
  try {
    const ledgerUrl = (await linesOf(ledger, 'stdout').match(/listening on (http:\/\/\S+)/, START_TIMEOUT_MS))[1]!;
    // The configuration file, where a deployment mounts it; the secrets in the environment.
    fs.mkdirSync(path.join(rootfs, 'etc/slipway'), { recursive: true });
    fs.writeFileSync(
      path.join(rootfs, 'etc/slipway/slipway.config.json'),
      JSON.stringify({ upstreams: { rpc: { type: 'rpc', urls: [ledgerUrl] }, engine: { type: 'jito', urls: [`${ledgerUrl}/api/v1`] } } }),
    );
    const port = await freePortPair();
    const env: Record<string, string> = {
      ...Object.fromEntries(config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)])),
      SLIPWAY_CONFIG: '/etc/slipway/slipway.config.json',
      SLIPWAY_PORT: String(port),
      SLIPWAY_POSTGRES_URL: POSTGRES_URL,
      SLIPWAY_POSTGRES_SCHEMA: schema,
      SLIPWAY_REDIS_URL: REDIS_URL,
      SLIPWAY_REDIS_KEY_PREFIX: prefix,
    };
    const started = Date.now();
    gateway = inImage(rootfs, user, config.WorkingDir || '/', [...config.Entrypoint, ...config.Cmd], env);
    const out = linesOf(gateway, 'stdout');
    const err = linesOf(gateway, 'stderr');
    const exited = new Promise<number | null>((resolve) => gateway!.once('exit', (code) => resolve(code)));
    try {
      await out.match(/listening on (http:\/\/\S+)/, START_TIMEOUT_MS);
    } catch (error) {
      throw new Error(`the image's gateway did not start: ${(error as Error).message}\n${err.lines.join('\n')}`, { cause: error });
    }
    const url = `http://127.0.0.1:${port}`;
    const apiKey = out.lines.map((l) => l.trim()).find((l) => l.startsWith('slw_'));
    assert.ok(apiKey !== undefined, `the first start printed the cluster's first API key:\n${out.lines.join('\n')}`);
    process.stdout.write(`image-run: the image's gateway answers on ${url} (started in ${Date.now() - started} ms)\n`);

    const healthcheck = () =>
      spawnSync(
        'unshare',
        [
          '--mount',
          '--',
          'sh',
          '-c',
          'root=$0 user=$1 && shift && mount --rbind /dev "$root/dev" && exec chroot --userspec="$user" "$root" "$@"',
          rootfs,
          `${user.uid}:${user.gid}`,
          ...config.Healthcheck!.Test.slice(1),
        ],
        { env, timeout: 10_000 },
      );
    const healthy = healthcheck();
    assert.equal(healthy.status, 0, `the image's health check passes while it runs: ${String(healthy.stderr)}`);

    const ledgerRpc = async (method: string, params: unknown[]) =>
      (await post(ledgerUrl, { jsonrpc: '2.0', id: 1, method, params })).body.result;
    const payer = Keypair.generate();
    const airdrop = (await ledgerRpc('requestAirdrop', [payer.publicKey.toBase58(), LAMPORTS_PER_SOL])) as string;
    await until(
      async () => ((await ledgerRpc('getSignatureStatuses', [[airdrop]])).value as unknown[])[0],
      (s) => s !== null,
      10_000,
    );
    const { blockhash } = (await ledgerRpc('getLatestBlockhash', [])).value as { blockhash: string };
    const transfer = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    transfer.sign(payer);
    const client = createSlipwayClient({ url, apiKey });
    const signature = await client.sendTransaction(transfer.serialize());
    const landed = await until(
      async () => (await client.getStatuses([signature]))[0],
      (s) => s !== null && s !== undefined && s.state !== 'forwarded' && s.state !== 'held',
      LAND_TIMEOUT_MS,
    );
    assert.equal(landed?.state, 'landed', `the transfer landed: ${JSON.stringify(landed)}`);
    const read = await post(url, { jsonrpc: '2.0', id: 1, method: 'getSignatureStatuses', params: [[signature]] }, { 'x-api-key': apiKey });
    assert.equal(
      read.body?.result?.value?.[0]?.slot,
      landed.slot,
      `getSignatureStatuses through the gateway: ${JSON.stringify(read.body)}`,
    );
    process.stdout.write(`image-run: a transfer sent through it landed in slot ${landed.slot} and reads back the same\n`);

    process.kill(pidOneOf(gateway.pid!), 'SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), STOP_TIMEOUT_MS))]);
    assert.equal(code, 0, `SIGTERM ends the gateway with status 0 (got ${code}):\n${err.lines.slice(-20).join('\n')}`);
    assert.ok(
      err.lines.some((l) => l.includes('SIGTERM received')),
      'the gateway said it was shutting down on SIGTERM',
    );
    assert.notEqual(healthcheck().status, 0, "the image's health check fails once the gateway stopped");
    process.stdout.write('image-run: SIGTERM drained it and it exited 0; the health check now fails, as it should\n');
  } finally {
    if (gateway !== undefined && gateway.exitCode === null) gateway.kill('SIGKILL');
    ledger.kill('SIGKILL');
    fs.rmSync(ledgerDir, { recursive: true, force: true });
    await drop();
    await clean();
  }
}

if (require.main === module) {
  const [rootfs, inspect] = process.argv.slice(2);
  if (rootfs === undefined || inspect === undefined) {
    process.stderr.write('usage: node dist/test/deploy/image-run.js ROOTFS INSPECT_JSON\n');
    process.exit(2);
  }
  main(path.resolve(rootfs), inspect).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`image-run: FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
