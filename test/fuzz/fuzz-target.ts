/**
 * The gateway a fuzz run attacks: `bin/slipway serve` as a process of its own (a crash shows
 * as its exit), on the embedded ledger, with both listeners (port + 1 must be free: the
 * start is tried again on other ports if it was not), and the real things hostile inputs
 * are made from: signed transactions, landed signatures, funded accounts.
 *
 * Its limits are set so that some are hit (subscriptions per connection, per key and in
 * total; requests in flight per key) and the rest are not in the way.
 */
import fs from 'node:fs';
import { Keypair } from '@solana/web3.js';
import { makeDataDir } from '../helpers/gateway';
import { startServer, type ServerProcess } from '../helpers/process';
import { connect, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import type { Target } from './door-report';

export const FUZZ_LIMITS: Record<string, string> = {
  SLIPWAY_LOG_LEVEL: 'error',
  SLIPWAY_MAX_SUBSCRIPTIONS_PER_CONNECTION: '8',
  SLIPWAY_MAX_SUBSCRIPTIONS_PER_KEY: '40',
  SLIPWAY_MAX_SUBSCRIPTIONS: '64',
  SLIPWAY_MAX_IN_FLIGHT_PER_KEY: '6',
};

export interface FuzzTarget extends Target {
  readonly dataDir: string;
  readonly validTransactions: readonly string[];
  readonly knownSignatures: readonly string[];
  readonly knownAccounts: readonly string[];
  /** The process's resident memory, MiB (null once it is gone). */
  rssMiB(): number | null;
  /** Times the process exited (and was started again). */
  readonly exits: number;
  /** Its stderr lines at level error or above. */
  errorLines(): string[];
  /** Starts it again if it exited; resolves true if it had. */
  restartIfExited(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Starts the gateway on `dataDir` and waits for its WebSocket listener. A first start that
 * found port + 1 taken is tried again in a new data dir (the first key is printed only by
 * the first start in a dir); a restart after a crash keeps its dir, and its keys.
 */
async function startWithWebSocket(dataDir: string, first: boolean): Promise<{ server: ServerProcess; dataDir: string }> {
  for (let attempt = 0; ; attempt++) {
    const server = await startServer(dataDir, FUZZ_LIMITS);
    for (let waited = 0; waited < 5_000 && !server.stdout.some((line) => line.includes('ws://')); waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    if (server.stdout.some((line) => line.includes('ws://'))) return { server, dataDir };
    server.child.kill('SIGKILL');
    await server.exited;
    if (attempt === 4) throw new Error('port + 1 was taken at every try: the WebSocket listener did not start');
    if (first) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      dataDir = makeDataDir();
    }
  }
}

/** A funded account, signed transfers not yet sent, and a few landed ones (their signatures). */
async function makeInputs(url: string, key: string) {
  const connection = connect(url, key);
  const alice = await fundedKeypair(connection, 1_000);
  const recipients = Array.from({ length: 4 }, () => Keypair.generate().publicKey);
  const validTransactions = await Promise.all(
    Array.from({ length: 20 }, (_, i) => transferTx(connection, alice, recipients[i % 4]!, 1_000_000 + i)),
  );
  const landed: string[] = [];
  for (let i = 0; i < 4; i++) {
    const signature = await connection.sendRawTransaction(
      Buffer.from(await transferTx(connection, alice, recipients[i]!, 5_000_000 + i), 'base64'),
    );
    await waitForStatus(connection, signature);
    landed.push(signature);
  }
  return { alice, recipients, validTransactions, landed };
}

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const started = await startWithWebSocket(makeDataDir(), true);
  const { dataDir } = started;
  let { server } = started;
  let exits = 0;
  /** Earlier processes' stderr, when one exited. */
  const pastStderr: string[] = [];
  // What hostile inputs are made from; if this fails, the gateway is not left running.
  let made: Awaited<ReturnType<typeof makeInputs>>;
  try {
    if (server.initialKey === undefined) throw new Error(`the gateway printed no first key: ${server.stdout.join('\n')}`);
    made = await makeInputs(server.url, server.initialKey);
  } catch (error) {
    server.child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const key = server.initialKey;
  const { alice, recipients, validTransactions, landed } = made;
  const port = () => Number(new URL(server.url).port);
  return {
    dataDir,
    key,
    validTransactions,
    knownSignatures: landed,
    knownAccounts: [alice.publicKey.toBase58(), ...recipients.map((r) => r.toBase58())],
    get url() {
      return server.url;
    },
    get port() {
      return port();
    },
    get wsPort() {
      return port() + 1;
    },
    get exits() {
      return exits;
    },
    alive: () => server.child.exitCode === null && server.child.signalCode === null,
    rssMiB() {
      try {
        return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) / 1024;
      } catch {
        return null;
      }
    },
    errorLines: () =>
      [...pastStderr, ...server.stderr]
        .join('')
        .split('\n')
        .filter((line) => /"level":(50|60)/.test(line)),
    async restartIfExited() {
      if (server.child.exitCode === null && server.child.signalCode === null) return false;
      exits += 1;
      pastStderr.push(...server.stderr);
      ({ server } = await startWithWebSocket(dataDir, false));
      return true;
    },
    async close() {
      server.child.kill('SIGTERM');
      await server.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
