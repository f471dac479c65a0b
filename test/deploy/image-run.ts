/**
 * The image as it runs, from its exported filesystem (scripts/image-test.sh builds the image,
 * exports a container of it into ROOTFS and writes `podman image inspect` into INSPECT; this
 * runs the rest). The image's own entrypoint runs under `unshare` (mount and PID namespaces:
 * it is PID 1, as in a container) and `chroot`, as the image's user, with the image's
 * environment and working directory, its /data as the data directory, and nothing of this
 * machine inside but /proc and /dev.
 *
 * Two containers of deploy/compose.yaml, with its commands, health checks and configuration
 * file: the ledger service (`ledger --port …`) and a gateway (`serve`), each in a copy of the
 * filesystem, on loopback (the ledger's port a free one, written where compose says
 * `ledger:8899`), the gateway on this machine's PostgreSQL and Redis (a schema and a key
 * prefix of its own) with a metrics token. A signed transfer is sent through the gateway,
 * lands, and is read back (getSubmissionStatuses, getSignatureStatuses through the gateway)
 * and counted in /metrics (scraped with the token); the health checks pass while it runs and
 * the image's fails once it stopped; SIGTERM ends each with status 0.
 *
 * Before running, what the image holds: no compiler, make or python, no package only the
 * devDependencies need, /data the user's and 0700, and the entrypoint, command and health
 * check the Containerfile names (compose-file.test.ts checks compose agrees with them).
 *
 * Usage (as root): node dist/test/deploy/image-run.js ROOTFS INSPECT_JSON. Exits 1 saying
 * what failed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { parse } from 'yaml';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { createSlipwayClient } from '../../src/client';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
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

/** A service of deploy/compose.yaml built from the image: its command, environment and health check. */
interface ComposeService {
  command: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck: { test: string[] };
}

function composeServices(): Record<string, ComposeService> {
  return (
    parse(fs.readFileSync(path.join(ROOT, 'deploy/compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }
  ).services;
}

/** One process of the image (a compose service), its output, and how it ended. */
interface Running {
  readonly child: ChildProcess;
  readonly out: ReturnType<typeof linesOf>;
  readonly err: ReturnType<typeof linesOf>;
  readonly exited: Promise<number | null>;
}

/** Runs `command` in the image as the image runs it, until it prints that it listens. */
async function startInImage(image: RunImage, command: string[], env: Record<string, string>, what: string): Promise<Running> {
  const child = inImage(image.rootfs, image.user, image.config.WorkingDir || '/', [...image.config.Entrypoint, ...command], env);
  const running = {
    child,
    out: linesOf(child, 'stdout'),
    err: linesOf(child, 'stderr'),
    exited: new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
  };
  try {
    await running.out.match(/listening on (http:\/\/\S+)/, START_TIMEOUT_MS);
  } catch (error) {
    throw new Error(`${what} did not start: ${(error as Error).message}\n${running.err.lines.join('\n')}`, { cause: error });
  }
  return running;
}

/** A health check's command (`CMD`, then the command) run in the image's filesystem as its user; its exit status. */
function healthcheckIn(image: RunImage, test: string[], env: Record<string, string>): number | null {
  const script = 'root=$0 user=$1 && shift && mount --rbind /dev "$root/dev" && exec chroot --userspec="$user" "$root" "$@"';
  const run = spawnSync(
    'unshare',
    ['--mount', '--', 'sh', '-c', script, image.rootfs, `${image.user.uid}:${image.user.gid}`, ...test.slice(1)],
    {
      env,
      timeout: 10_000,
    },
  );
  return run.status;
}

/** SIGTERM to the image's PID 1; its exit status, or 'still running' past STOP_TIMEOUT_MS. */
async function stop(running: Running): Promise<number | null | string> {
  process.kill(pidOneOf(running.child.pid!), 'SIGTERM');
  return Promise.race([running.exited, new Promise<string>((r) => setTimeout(() => r('still running'), STOP_TIMEOUT_MS))]);
}

/** A transfer from a payer the ledger funds, sent through the gateway; its status once final, and getSignatureStatuses' through the gateway. */
async function sendTransfer(ledgerUrl: string, url: string, apiKey: string) {
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
  const status = await until(
    async () => (await client.getStatuses([signature]))[0],
    (s) => s !== null && s !== undefined && s.state !== 'forwarded' && s.state !== 'held',
    LAND_TIMEOUT_MS,
  );
  const read = await post(url, { jsonrpc: '2.0', id: 1, method: 'getSignatureStatuses', params: [[signature]] }, { 'x-api-key': apiKey });
  return { status, read: read.body };
}

interface RunImage {
  readonly rootfs: string;
  readonly user: { uid: number; gid: number };
  readonly config: ImageConfig;
}

/**
 * deploy/compose.yaml's ledger and gateway-1, each from a copy of the exported filesystem (a
 * container each, as compose runs them) with compose's commands, health checks and
 * configuration file; on loopback, so the ledger's port is a free one written where compose
 * names `ledger:8899`, and PostgreSQL and Redis are this machine's, with a schema and prefix
 * of the test's own.
 */
async function runCluster(gatewayImage: RunImage, ledgerImage: RunImage): Promise<void> {
  const services = composeServices();
  const ledgerService = services.ledger!;
  const gatewayService = services['gateway-1']!;
  const composePort = ledgerService.command[ledgerService.command.indexOf('--port') + 1]!;
  const ledgerPort = String(await freePortPair());
  const onLoopback = (text: string) =>
    text.replaceAll(`ledger:${composePort}`, `127.0.0.1:${ledgerPort}`).replaceAll(`127.0.0.1:${composePort}`, `127.0.0.1:${ledgerPort}`);
  const imageEnv = Object.fromEntries(gatewayImage.config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const ledgerCommand = ledgerService.command.map(onLoopback).map((arg, i, all) => (all[i - 1] === '--port' ? ledgerPort : arg));

  const { schema, drop } = testSchema();
  const { prefix, clean } = testRedisPrefix();
  const running: Running[] = [];
  try {
    const ledger = await startInImage(ledgerImage, ledgerCommand, imageEnv, "compose's ledger service, from the image");
    running.push(ledger);
    const ledgerHealth = ledgerService.healthcheck.test.map(onLoopback);
    assert.equal(healthcheckIn(ledgerImage, ledgerHealth, imageEnv), 0, "compose's health check of the ledger passes");
    const ledgerUrl = `http://127.0.0.1:${ledgerPort}`;
    process.stdout.write(`image-run: compose's ledger service runs from the image (${ledgerCommand.join(' ')}), healthy\n`);

    // The configuration file where compose mounts it; the secrets in the environment, as compose passes them.
    const configMount = gatewayService
      .volumes!.map((v) => v.split(':'))
      .find(([, target]) => target === gatewayService.environment!.SLIPWAY_CONFIG)!;
    const configFile = path.join(gatewayImage.rootfs, configMount[1]!);
    fs.mkdirSync(path.dirname(configFile), { recursive: true });
    fs.writeFileSync(configFile, onLoopback(fs.readFileSync(path.resolve(ROOT, 'deploy', configMount[0]!), 'utf8')));
    const port = await freePortPair();
    const metricsToken = randomBytes(16).toString('hex');
    const env: Record<string, string> = {
      ...imageEnv,
      SLIPWAY_CONFIG: gatewayService.environment!.SLIPWAY_CONFIG!,
      SLIPWAY_PORT: String(port),
      SLIPWAY_POSTGRES_URL: POSTGRES_URL,
      SLIPWAY_POSTGRES_SCHEMA: schema,
      SLIPWAY_REDIS_URL: REDIS_URL,
      SLIPWAY_REDIS_KEY_PREFIX: prefix,
      SLIPWAY_METRICS_TOKEN: metricsToken,
    };
    assert.deepEqual(gatewayService.command, gatewayImage.config.Cmd, "compose's gateway command is the image's");
    const started = Date.now();
    const gateway = await startInImage(gatewayImage, gatewayService.command, env, "the image's gateway");
    running.push(gateway);
    const url = `http://127.0.0.1:${port}`;
    const apiKey = gateway.out.lines.map((l) => l.trim()).find((l) => l.startsWith('slw_'));
    assert.ok(apiKey !== undefined, `the first start printed the cluster's first API key:\n${gateway.out.lines.join('\n')}`);
    process.stdout.write(`image-run: the image's gateway answers on ${url} (started in ${Date.now() - started} ms)\n`);
    assert.equal(
      healthcheckIn(gatewayImage, gatewayImage.config.Healthcheck!.Test, env),
      0,
      "the image's health check passes while it runs",
    );
    assert.equal(healthcheckIn(gatewayImage, gatewayService.healthcheck.test, env), 0, "compose's health check of the gateway passes");

    const { status, read } = await sendTransfer(ledgerUrl, url, apiKey);
    assert.equal(status?.state, 'landed', `the transfer landed: ${JSON.stringify(status)}`);
    assert.equal(read?.result?.value?.[0]?.slot, status.slot, `getSignatureStatuses through the gateway: ${JSON.stringify(read)}`);
    const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    assert.equal(metrics.status, 200, 'Prometheus scrapes /metrics with the token');
    assert.match(await metrics.text(), /slipway_submissions_total\{[^}]*outcome="accepted"[^}]*\} 1/);
    process.stdout.write(
      `image-run: a transfer sent through it landed in slot ${status.slot}, reads back the same, and /metrics counts it\n`,
    );

    const code = await stop(gateway);
    assert.equal(code, 0, `SIGTERM ends the gateway with status 0 (got ${code}):\n${gateway.err.lines.slice(-20).join('\n')}`);
    assert.ok(
      gateway.err.lines.some((l) => l.includes('SIGTERM received')),
      'the gateway said it was shutting down on SIGTERM',
    );
    assert.notEqual(
      healthcheckIn(gatewayImage, gatewayImage.config.Healthcheck!.Test, env),
      0,
      "the image's health check fails once the gateway stopped",
    );
    assert.equal(await stop(ledger), 0, 'SIGTERM ends the ledger with status 0');
    process.stdout.write(
      'image-run: SIGTERM drained the gateway and the ledger, each exited 0; the health check now fails, as it should\n',
    );
  } finally {
    for (const { child } of running) if (child.exitCode === null) child.kill('SIGKILL');
    await drop();
    await clean();
  }
}

async function main(rootfs: string, inspectFile: string): Promise<void> {
  const inspected = JSON.parse(fs.readFileSync(inspectFile, 'utf8')) as { Config: ImageConfig; Healthcheck?: ImageConfig['Healthcheck'] }[];
  // podman shows the health check beside the configuration, docker inside it.
  const config = { ...inspected[0]!.Config, Healthcheck: inspected[0]!.Config.Healthcheck ?? inspected[0]!.Healthcheck };
  const user = checkContents(rootfs, config);
  process.stdout.write(
    `image-run: the image holds what it should (user ${user.uid}:${user.gid}, /data 0700, no toolchain, no devDependency)\n`,
  );
  // The ledger's container: a copy of the gateway's filesystem as it was exported (its own /data).
  const ledgerRootfs = `${rootfs}-ledger`;
  const copied = spawnSync('cp', ['-a', rootfs, ledgerRootfs]);
  assert.equal(copied.status, 0, `cp -a ${rootfs} ${ledgerRootfs}: ${String(copied.stderr)}`);
  try {
    await runCluster({ rootfs, user, config }, { rootfs: ledgerRootfs, user, config });
  } finally {
    if (!fs.readFileSync('/proc/mounts', 'utf8').includes(` ${ledgerRootfs}/`)) fs.rmSync(ledgerRootfs, { recursive: true, force: true });
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
