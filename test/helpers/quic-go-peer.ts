/**
 * The quic-go peer (interop/quic-go): a Solana-TPU-like QUIC receiver and sender built on an
 * implementation that is not ours, Debian's quic-go 0.29, run as child processes.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after } from 'node:test';

const ROOT = path.resolve(__dirname, '../../..');

export interface ReceiverStats {
  event: 'stats';
  streams: number;
  bytes: number;
  connections: number;
  cpu_user_ms: number;
  cpu_system_ms: number;
}

export type ReceiverEvent =
  | { event: 'listening'; port: number; retry: boolean; identity?: string }
  | { event: 'connection'; identity: string; alpn: string; remote: string }
  | { event: 'stream'; identity: string; length: number; sha256: string }
  | { event: 'invalid_stream'; identity: string; length: number; reason: string }
  | { event: 'closed'; identity: string; remote: string; reason: string }
  | { event: 'error'; message: string }
  | ReceiverStats;

export interface ReceiverOptions {
  /** Demand a Retry (address validation) from every new connection. */
  retry?: boolean;
  /** A longer or empty stream closes its connection with code 5; 1232 unless given. */
  maxStreamBytes?: number;
  /** No event per stream (for benchmarks). */
  quiet?: boolean;
  /** The server certificate's key; ed25519 unless given. */
  serverKey?: 'ed25519' | 'ecdsa';
}

export interface QuicGoReceiver {
  readonly port: number;
  /** Every event printed so far, in order. */
  readonly events: readonly ReceiverEvent[];
  /** The first event, printed or to come, for which predicate holds. */
  waitFor<E extends ReceiverEvent>(predicate: (event: ReceiverEvent) => event is E, timeoutMs?: number): Promise<E>;
  waitFor(predicate: (event: ReceiverEvent) => boolean, timeoutMs?: number): Promise<ReceiverEvent>;
  /** The counters now, every event before them printed. */
  stats(): Promise<ReceiverStats>;
  /** Stops the receiver; resolves with its last counters. */
  close(): Promise<ReceiverStats>;
}

export type SenderEvent =
  | { event: 'connected'; identity: string; alpn: string; retry: boolean }
  | { event: 'sent'; count: number; written_ms: number; elapsed_ms: number; per_second: number; retry: boolean }
  | {
      event: 'error';
      stage: string;
      sent: number;
      message: string;
      application_error_code?: number;
      transport_error_code?: number;
      remote?: boolean;
    };

export interface SenderOptions {
  port: number;
  /** A Solana CLI keypair file, or the 64-byte secret key (seed then public key) to write to one. */
  identity: string | Uint8Array;
  /** One stream each; an empty one is an empty stream. */
  transactions: readonly Uint8Array[];
  /** The ALPN offered; solana-tpu unless given. */
  alpn?: string;
  /** 'ecdsa' presents a certificate whose key is not an ed25519 identity. */
  clientKey?: 'ed25519' | 'ecdsa';
}

export interface SenderResult {
  code: number | null;
  events: SenderEvent[];
  /** The last event: `sent` on success, `error` otherwise. */
  result: SenderEvent | undefined;
  stderr: string;
}

/** Children still running when a test file ends, so that a failed test does not leave one behind. */
const running = new Set<ChildProcess>();
if (process.env.NODE_TEST_CONTEXT !== undefined) after(() => running.forEach((child) => child.kill('SIGKILL')));

let built: Promise<string> | undefined;

/** Builds the peer once per process (scripts/build-interop.sh); resolves with the binary's path. */
export function buildQuicGoPeer(): Promise<string> {
  built ??= new Promise((resolve, reject) => {
    execFile('sh', [path.join(ROOT, 'scripts/build-interop.sh')], { cwd: ROOT }, (error, stdout, stderr) => {
      if (error) reject(new Error(`could not build the quic-go peer: ${stderr.trim() || error.message}`));
      else resolve(stdout.trim().split('\n').pop()!);
    });
  });
  return built;
}

function track(child: ChildProcess): Promise<number | null> {
  running.add(child);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
}

export async function startQuicGoReceiver(options: ReceiverOptions = {}): Promise<QuicGoReceiver> {
  const binary = await buildQuicGoPeer();
  const args = ['receive', '--listen', '127.0.0.1:0', '--max-stream-bytes', String(options.maxStreamBytes ?? 1232)];
  if (options.retry) args.push('--retry');
  if (options.quiet) args.push('--quiet');
  if (options.serverKey) args.push('--server-key', options.serverKey);
  // stdin a pipe: its end (ours closing it, or our death) ends the receiver.
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = track(child);
  child.stdin!.on('error', () => {}); // a receiver that died: waitFor and close say so
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const events: ReceiverEvent[] = [];
  const waiters = new Set<(event: ReceiverEvent) => void>();
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    const event = JSON.parse(line) as ReceiverEvent;
    events.push(event);
    waiters.forEach((waiter) => waiter(event));
  });

  function waitFor(predicate: (event: ReceiverEvent) => boolean, timeoutMs = 10_000, from = 0): Promise<ReceiverEvent> {
    const seen = events.slice(from).find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = (error?: Error, event?: ReceiverEvent): void => {
        clearTimeout(timer);
        waiters.delete(waiter);
        if (event) resolve(event);
        else reject(error!);
      };
      const waiter = (event: ReceiverEvent): void => {
        if (predicate(event)) done(undefined, event);
      };
      const timer = setTimeout(
        () => done(new Error(`quic-go receiver: no such event within ${timeoutMs} ms; stderr: ${stderr}`)),
        timeoutMs,
      );
      waiters.add(waiter);
      void exited.then((code) => done(new Error(`quic-go receiver exited with ${code}; stderr: ${stderr}`)));
    });
  }
  const isStats = (event: ReceiverEvent): event is ReceiverStats => event.event === 'stats';

  const listening = await waitFor((event) => event.event === 'listening' || event.event === 'error', 15_000).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  if (listening.event !== 'listening') throw new Error(`quic-go receiver did not start: ${JSON.stringify(listening)}`);
  return {
    port: listening.port,
    events,
    waitFor: waitFor as QuicGoReceiver['waitFor'],
    stats: async () => {
      const from = events.length;
      child.kill('SIGUSR1');
      return (await waitFor(isStats, 10_000, from)) as ReceiverStats;
    },
    close: async () => {
      const from = events.length;
      child.stdin!.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
      const last = events.slice(from).find(isStats);
      if (!last) throw new Error(`quic-go receiver ended without its counters; stderr: ${stderr}`);
      return last;
    },
  };
}

/** Sends each transaction on its own unidirectional stream of one connection, as a TPU client does. */
export async function runQuicGoSender(options: SenderOptions): Promise<SenderResult> {
  const binary = await buildQuicGoPeer();
  const { identity } = options;
  let keypairFile: string;
  let tmpDir: string | undefined;
  if (typeof identity === 'string') keypairFile = identity;
  else {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-quic-go-'));
    keypairFile = path.join(tmpDir, 'id.json');
    fs.writeFileSync(keypairFile, JSON.stringify(Array.from(identity)), { mode: 0o600 });
  }
  const args = ['send', '--to', `127.0.0.1:${options.port}`, '--identity', keypairFile, '--alpn', options.alpn ?? 'solana-tpu'];
  if (options.clientKey) args.push('--client-key', options.clientKey);
  try {
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = track(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin!.on('error', () => {}); // a sender that failed early stops reading: its exit says why
    child.stdin!.end(options.transactions.map((tx) => Buffer.from(tx).toString('base64') + '\n').join(''));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await exited;
    clearTimeout(killer);
    const events = stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as SenderEvent);
    return { code, events, result: events[events.length - 1], stderr };
  } finally {
    if (tmpDir !== undefined) fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}
