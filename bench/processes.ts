/** Starts the servers the benchmark measures, each in its own process, and waits until they listen. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.resolve(__dirname, '../..');
/** A server that has not said it listens within this is killed and the step fails: no step waits for ever. */
const START_TIMEOUT_MS = 60_000;
/** A server still running this long after SIGTERM is killed (SIGKILL). */
const STOP_TIMEOUT_MS = 15_000;

export interface ServerProcess {
  readonly url: string;
  readonly key: string | undefined;
  readonly pid: number;
  /** Resolves when the process exits, with how it ended (a server that aborts ends with a signal). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last of what it wrote to stderr. */
  stderr(): string;
  /** SIGTERM, then resolves once the process has exited. */
  stop(): Promise<void>;
}

/** A process's resident set, from /proc. */
export function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

function waitForListening(child: ChildProcess, what: string, errors: string[]): Promise<{ url: string; key: string | undefined }> {
  return new Promise((resolve, reject) => {
    let key: string | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not listen within ${START_TIMEOUT_MS / 1000} s: ${errors.join('')}`));
    }, START_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${errors.join('')}`));
    });
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const trimmed = line.trim();
      if (trimmed.startsWith('slw_')) key = trimmed;
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1]!, key });
      }
    });
  });
}

async function start(command: string, args: string[], what: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  // bin/slipway runs the `node` on PATH: make it this one, so that both ends run one Node.js.
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, env: { ...process.env, PATH, ...env } });
  const errors: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => {
    errors.push(chunk.toString());
    if (errors.length > 256) errors.shift();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const { url, key } = await waitForListening(child, what, errors);
  return {
    url,
    key,
    pid: child.pid!,
    exited,
    stderr: () => errors.join(''),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(killer);
    },
  };
}

export const startCeiling = () => start(process.execPath, [path.join(ROOT, 'dist/bench/ceiling-server.js')], 'the ceiling server');

/**
 * `cpus` (taskset's list, e.g. "1") pins the gateway to those cores, leaving the others to the
 * load generator. `nodeFlags` (e.g. --cpu-prof, which NODE_OPTIONS may not carry) start it with
 * this Node.js and those flags instead of through bin/slipway.
 */
export const startSlipway = (dataDir: string, extra: string[], env: Record<string, string> = {}, cpus?: string, nodeFlags?: string[]) => {
  const serve = ['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', ...extra];
  const command =
    nodeFlags === undefined
      ? [path.join(ROOT, 'bin/slipway'), ...serve]
      : [process.execPath, ...nodeFlags, path.join(ROOT, 'dist/src/cli/main.js'), ...serve];
  return cpus === undefined
    ? start(command[0]!, command.slice(1), 'Slipway', env)
    : start('taskset', ['-c', cpus, ...command], 'Slipway', env);
};

/** A gateway from the build at `root` (another checkout, built), run with this Node.js: `npm run bench:compare`'s base. */
export const startSlipwayAt = (root: string, dataDir: string, extra: string[], nodeFlags: string[] = []) =>
  start(
    process.execPath,
    [...nodeFlags, path.join(root, 'dist/src/cli/main.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', ...extra],
    `Slipway (${root})`,
  );

/**
 * The local cluster (`bin/slipway ledger`): a Solana JSON-RPC node, a block engine and a QUIC
 * TPU per validator on ephemeral ports of 127.0.0.1, slots of `slotMs`; `extra` flags (e.g.
 * `--market 2`) as the command takes them.
 */
export const startLedger = (dataDir: string, slotMs: number, extra: string[] = []) =>
  start(
    path.join(ROOT, 'bin/slipway'),
    ['ledger', '--host', '127.0.0.1', '--port', '0', '--slot-ms', String(slotMs), '--data-dir', dataDir, '--log-level', 'warn', ...extra],
    'the local cluster (bin/slipway ledger)',
  );

/**
 * Creates an API key named `name` in the gateway data directory `dataDir` (`bin/slipway keys
 * create`, before the gateway starts there), and answers the key: a gateway's traffic can be
 * split over keys, each with a report of its own.
 */
export function createKey(dataDir: string, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
    execFile(
      path.join(ROOT, 'bin/slipway'),
      ['keys', 'create', '--name', name, '--data-dir', dataDir, '--json'],
      { cwd: ROOT, env: { ...process.env, PATH }, timeout: START_TIMEOUT_MS },
      (error, stdout, stderr) => {
        if (error !== null) return reject(new Error(`keys create ${name}: ${error.message} ${stderr}`));
        const key = (JSON.parse(stdout) as { key?: unknown }).key;
        if (typeof key !== 'string') return reject(new Error(`keys create ${name} printed no key: ${stdout}`));
        resolve(key);
      },
    );
  });
}
