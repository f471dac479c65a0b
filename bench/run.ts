/**
 * `npm run bench [-- --quick | --soak]`: Slipway beside the machine's ceiling, in one run,
 * so that the ratios hold on a noisy shared machine.
 *
 * 1. Ceiling: a bare node:http server (own process), the same bodies and connections.
 * 2. Slipway sendTransaction with everything on, in front of the sink upstream.
 * 3. The same with signature verification off (the trusted-verifier setting).
 * 4. /submit-batch and sendBundle with 5 transactions each.
 * 5. Latency at a fixed rate, open loop, for the ceiling and for Slipway.
 * 6. End to end on the embedded ledger, for reference.
 * 7. The cost parts in isolation.
 * With --soak: 60 s of full load with the resident set sampled every second.
 *
 * Writes bench/results/latest.json and bench/results/latest.svg.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bs58 from 'bs58';
import { measureCostParts, type CostPart } from './cost-parts';
import { runLoad, type LoadResult } from './load';
import { runOpenLoop, type LatencyResult } from './open-loop';
import { startCeiling, startSlipway, type ServerProcess } from './processes';
import { writeReport } from './report';
import { newSigner, transferFactory } from './signed-transactions';

const MODE = process.argv.includes('--quick') ? 'quick' : process.argv.includes('--soak') ? 'soak' : 'default';
const LOAD_S = MODE === 'quick' ? 3 : 10;
const FIXED_S = MODE === 'quick' ? 3 : 8;
const FIXED_RATE = 2_000;
const CONNECTIONS = 32;
const SOAK_S = 60;
/**
 * The soak shortens the duplicate window so that every window fills within the run and the
 * resident set can be seen to level off (with the default 120 s it would still be filling).
 */
const SOAK_DUPLICATE_TTL_MS = 15_000;
/** Unrecorded time at the fixed rate before each latency measurement: both servers get the same warm-up (JIT, connections). */
const WARMUP_MS = MODE === 'quick' ? 2_000 : 4_000;

/** The open-loop measurement, after an unrecorded warm-up at the same rate. */
async function measureAtFixedRate(url: string, headers: Record<string, string>, nextBody: () => string) {
  const options = { url, path: '/', headers, nextBody, rate: FIXED_RATE, connections: CONNECTIONS };
  await runOpenLoop({ ...options, durationMs: WARMUP_MS });
  return runOpenLoop({ ...options, durationMs: FIXED_S * 1000 });
}

export interface SoakResult {
  readonly seconds: number;
  readonly rps: number;
  readonly duplicateTtlMs: number;
  /** Resident set of the Slipway process, one sample a second. */
  readonly rssMiB: number[];
}

export interface BenchResults {
  readonly mode: string;
  readonly machine: { cores: number; cpu: string; memoryGiB: number; node: string; platform: string };
  readonly startedAt: string;
  readonly ceiling: { load: LoadResult; fixedRate: LatencyResult };
  readonly slipway: {
    sendTransaction: LoadResult;
    sendTransactionNoVerify: LoadResult;
    submitBatch: LoadResult & { tps: number };
    sendBundle: LoadResult & { tps: number };
    fixedRate: LatencyResult;
    embeddedLedger: LoadResult;
  };
  readonly costParts: CostPart[];
  readonly soak?: SoakResult;
  readonly ratios: Record<string, number>;
}

let step = 0;
const STEPS = MODE === 'soak' ? 10 : 9;
let spinner: NodeJS.Timeout | undefined;
function progress(what: string, seconds?: number): void {
  if (spinner) clearInterval(spinner);
  step += 1;
  const started = Date.now();
  const frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
  let frame = 0;
  const draw = () => {
    const elapsed = (Date.now() - started) / 1000;
    const of = seconds === undefined ? '' : ` (${Math.min(elapsed, seconds).toFixed(0)}/${seconds} s)`;
    process.stderr.write(`\r\x1b[K${frames[frame++ % frames.length]} [${step}/${STEPS}] ${what}${of}`);
  };
  if (!process.stderr.isTTY) {
    process.stderr.write(`[${step}/${STEPS}] ${what}${seconds === undefined ? '' : ` (${seconds} s)`}\n`);
    return;
  }
  draw();
  spinner = setInterval(draw, 250);
}

/** Bodies for one operation: each call a new, distinct, signed set of transactions. */
function bodies(kind: 'sendTransaction' | 'submitBatch' | 'sendBundle', next: () => string): () => string {
  let id = 0;
  switch (kind) {
    case 'sendTransaction':
      return () => `{"jsonrpc":"2.0","id":${++id},"method":"sendTransaction","params":["${next()}",{"encoding":"base64"}]}`;
    case 'submitBatch':
      return () => JSON.stringify({ jsonrpc: '2.0', id: ++id, params: { transactions: [next(), next(), next(), next(), next()], options: [] } });
    case 'sendBundle':
      return () => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'sendBundle', params: [[next(), next(), next(), next(), next()], { encoding: 'base64' }] });
  }
}

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function withServer<T>(start: () => Promise<ServerProcess>, run: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await start();
  try {
    return await run(server);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-bench-'));
  const payer = newSigner();
  const next = transferFactory(payer, newSigner().publicKey, Buffer.alloc(32, 7));
  const startedAt = new Date().toISOString();
  try {
    progress('ceiling: bare node:http, full load', LOAD_S);
    const ceiling = await withServer(startCeiling, async (server) => {
      const load = await runLoad({ url: server.url, path: '/', headers: {}, nextBody: bodies('sendTransaction', next), durationS: LOAD_S, connections: CONNECTIONS });
      progress(`ceiling: ${FIXED_RATE} requests/s, open loop`, FIXED_S);
      const fixedRate = await measureAtFixedRate(server.url, {}, bodies('sendTransaction', next));
      return { load, fixedRate };
    });

    const sink = (name: string, extra: string[] = []) => () => startSlipway(path.join(work, name), ['--upstream', 'sink', ...extra]);
    progress('Slipway sendTransaction, everything on, sink upstream', LOAD_S);
    const verified = await withServer(sink('verify-on'), async (server) => {
      const headers = { 'x-api-key': server.key! };
      const sendTransaction = await runLoad({ url: server.url, path: '/', headers, nextBody: bodies('sendTransaction', next), durationS: LOAD_S, connections: CONNECTIONS });
      progress('Slipway /submit-batch, 5 transactions', LOAD_S);
      const batch = await runLoad({ url: server.url, path: '/submit-batch', headers, nextBody: bodies('submitBatch', next), durationS: LOAD_S, connections: CONNECTIONS });
      progress('Slipway sendBundle, 5 transactions', LOAD_S);
      const bundle = await runLoad({ url: server.url, path: '/', headers, nextBody: bodies('sendBundle', next), durationS: LOAD_S, connections: CONNECTIONS });
      return { sendTransaction, batch, bundle };
    });

    // A server of its own for latency: what a gateway at a steady moderate rate answers, not
    // the after-effects of the saturation runs above (WAL checkpoints, index catch-up).
    progress(`Slipway sendTransaction at ${FIXED_RATE} requests/s, open loop`, FIXED_S);
    const fixedRate = await withServer(sink('fixed-rate'), (server) =>
      measureAtFixedRate(server.url, { 'x-api-key': server.key! }, bodies('sendTransaction', next)),
    );

    progress('Slipway sendTransaction, signature verification off', LOAD_S);
    const noVerify = await withServer(sink('verify-off', ['--verify-signatures', 'false']), (server) =>
      runLoad({ url: server.url, path: '/', headers: { 'x-api-key': server.key! }, nextBody: bodies('sendTransaction', next), durationS: LOAD_S, connections: CONNECTIONS }),
    );

    progress('Slipway end to end on the embedded ledger', LOAD_S);
    const embeddedLedger = await withServer(
      () => startSlipway(path.join(work, 'embedded'), []),
      async (server) => {
        const headers = { 'content-type': 'application/json', 'x-api-key': server.key! };
        const call = async (method: string, params: unknown[]) =>
          ((await (await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()) as { result: any }).result;
        const funded = newSigner();
        await call('requestAirdrop', [bs58.encode(funded.publicKey), 1_000_000_000_000]);
        const blockhash = Buffer.from(bs58.decode((await call('getLatestBlockhash', [])).value.blockhash));
        const real = transferFactory(funded, newSigner().publicKey, blockhash);
        return runLoad({ url: server.url, path: '/', headers: { 'x-api-key': server.key! }, nextBody: bodies('sendTransaction', real), durationS: LOAD_S, connections: CONNECTIONS });
      },
    );

    progress('cost parts in isolation');
    const costParts = await measureCostParts(MODE === 'quick' ? 1000 : 3000);

    let soak: SoakResult | undefined;
    if (MODE === 'soak') {
      progress('soak: sendTransaction at full load, resident set sampled each second', SOAK_S);
      const soakServer = () => startSlipway(path.join(work, 'soak'), ['--upstream', 'sink'], { SLIPWAY_DUPLICATE_TTL_MS: String(SOAK_DUPLICATE_TTL_MS) });
      soak = await withServer(soakServer, async (server) => {
        const samples: number[] = [];
        const sampler = setInterval(() => samples.push(rssMiB(server.pid)), 1000);
        const load = await runLoad({ url: server.url, path: '/', headers: { 'x-api-key': server.key! }, nextBody: bodies('sendTransaction', next), durationS: SOAK_S, connections: CONNECTIONS });
        clearInterval(sampler);
        return { seconds: SOAK_S, rps: load.rps, duplicateTtlMs: SOAK_DUPLICATE_TTL_MS, rssMiB: samples };
      });
    }
    if (spinner) clearInterval(spinner);
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');

    const results: BenchResults = {
      mode: MODE,
      machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` },
      startedAt,
      ceiling,
      slipway: {
        sendTransaction: verified.sendTransaction,
        sendTransactionNoVerify: noVerify,
        submitBatch: { ...verified.batch, tps: verified.batch.rps * 5 },
        sendBundle: { ...verified.bundle, tps: verified.bundle.rps * 5 },
        fixedRate,
        embeddedLedger,
      },
      costParts,
      ...(soak === undefined ? {} : { soak }),
      ratios: {
        sendTransaction_vs_ceiling_rps: verified.sendTransaction.rps / ceiling.load.rps,
        sendTransaction_noverify_vs_ceiling_rps: noVerify.rps / ceiling.load.rps,
        submitBatch_tps_vs_ceiling_rps: (verified.batch.rps * 5) / ceiling.load.rps,
        sendBundle_tps_vs_ceiling_rps: (verified.bundle.rps * 5) / ceiling.load.rps,
        p99_vs_ceiling_at_fixed_rate: fixedRate.p99 / ceiling.fixedRate.p99,
        p50_vs_ceiling_at_fixed_rate: fixedRate.p50 / ceiling.fixedRate.p50,
      },
    };
    writeReport(results, path.resolve(__dirname, '../../bench/results'));
  } finally {
    if (spinner) clearInterval(spinner);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`\nbench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
