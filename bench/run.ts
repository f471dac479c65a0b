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
 * 8. Sending to a TPU over QUIC: CPU per transaction beside a dgram.send floor (tpu-cost.ts).
 * 9. Landing by route: RPC fan-out, Jito and TPU under the same offered load on the local
 *    cluster, landed % and slots from request to landed (landing-by-route.ts).
 * With --soak: 60 s of full load with the resident set sampled every second.
 *
 * Writes bench/results/latest.json and bench/results/latest.svg.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bs58 from 'bs58';
import { measureCostParts } from './cost-parts';
import { measureTpuCost } from './tpu-cost';
import { landingFigures, measureLandingByRoute } from './landing-by-route';
import { runLoad, type LoadResult } from './load';
import { createLatencyRecorder, openLoopPool, runOpenLoop, summarize, type LatencyResult } from './open-loop';
import { rssMiB, startCeiling, startSlipway, type ServerProcess } from './processes';
import { writeReport } from './report';
import type { BenchResults, SoakResult } from './bench-results';
import { newSigner, pregenerate, transferFactory } from './signed-transactions';

const MODE = process.argv.includes('--quick') ? 'quick' : process.argv.includes('--soak') ? 'soak' : 'default';
const LOAD_S = MODE === 'quick' ? 2 : 10;
const FIXED_S = MODE === 'quick' ? 2 : 8;
const FIXED_RATE = 2_000;
const CONNECTIONS = 32;
const SOAK_S = 60;
/**
 * The soak shortens the duplicate window so that every window fills within the run and the
 * resident set can be seen to level off (with the default 120 s it would still be filling).
 */
const SOAK_DUPLICATE_TTL_MS = 15_000;
/** Unrecorded time at the fixed rate before each latency measurement: both servers get the same warm-up (JIT, connections). */
const WARMUP_MS = MODE === 'quick' ? 1_000 : 4_000;

/** Unrecorded full load before each full-load measurement (JIT, connections, caches), for every server alike. */
const LOAD_WARMUP_S = MODE === 'quick' ? 1 : 2;

async function measureLoad(options: Parameters<typeof runLoad>[0]): Promise<LoadResult> {
  await runLoad({ ...options, durationS: LOAD_WARMUP_S });
  return runLoad(options);
}

/** Rounds of the fixed-rate measurement: each server gets FIXED_S seconds in all, in alternating one-second rounds. */
const ROUND_MS = 1_000;

interface FixedRateTarget {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly nextBody: () => string;
}

/**
 * The open-loop measurement of two servers, interleaved: an unrecorded warm-up at the same
 * rate for each, then alternating rounds (A B B A A B …) into one histogram per server, so
 * that noise from the machine's neighbours falls on both alike, not on whichever ran during it.
 */
async function measureAtFixedRate(a: FixedRateTarget, b: FixedRateTarget): Promise<[LatencyResult, LatencyResult]> {
  const targets = [a, b].map((target) => ({
    target,
    pool: openLoopPool(target.url, CONNECTIONS),
    recorder: createLatencyRecorder(),
    options: { url: target.url, path: '/', headers: target.headers, nextBody: target.nextBody, rate: FIXED_RATE, connections: CONNECTIONS },
  }));
  for (const t of targets) await runOpenLoop({ ...t.options, durationMs: WARMUP_MS }, createLatencyRecorder(), t.pool);
  const rounds = Math.round((FIXED_S * 1000) / ROUND_MS);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) await runOpenLoop({ ...t.options, durationMs: ROUND_MS }, t.recorder, t.pool);
  }
  await Promise.all(targets.map((t) => t.pool.close()));
  return [summarize(targets[0]!.recorder), summarize(targets[1]!.recorder)];
}

let step = 0;
const STEPS = MODE === 'soak' ? 16 : 15;
let spinner: NodeJS.Timeout | undefined;
function progress(what: string, seconds?: number, advance = true): void {
  if (spinner) clearInterval(spinner);
  if (advance) step += 1;
  const started = Date.now();
  const frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
  let frame = 0;
  const shown = advance ? step : step + 1; // preparing the next step
  const draw = () => {
    const elapsed = (Date.now() - started) / 1000;
    const of = seconds === undefined ? '' : ` (${Math.min(elapsed, seconds).toFixed(0)}/${seconds} s)`;
    process.stderr.write(`\r\x1b[K${frames[frame++ % frames.length]} [${shown}/${STEPS}] ${what}${of}`);
  };
  if (!process.stderr.isTTY) {
    process.stderr.write(`[${shown}/${STEPS}] ${what}${seconds === undefined ? '' : ` (${seconds} s)`}\n`);
    return;
  }
  draw();
  spinner = setInterval(draw, 250);
}

function fmtCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** Bodies for one operation: each call a new, distinct, signed set of transactions. */
function bodies(kind: 'sendTransaction' | 'submitBatch' | 'sendBundle', next: () => string): () => string {
  let id = 0;
  switch (kind) {
    case 'sendTransaction':
      return () => `{"jsonrpc":"2.0","id":${++id},"method":"sendTransaction","params":["${next()}",{"encoding":"base64"}]}`;
    case 'submitBatch':
      return () =>
        JSON.stringify({ jsonrpc: '2.0', id: ++id, params: { transactions: [next(), next(), next(), next(), next()], options: [] } });
    case 'sendBundle':
      return () =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'sendBundle',
          params: [[next(), next(), next(), next(), next()], { encoding: 'base64' }],
        });
  }
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
    // Every transaction is signed before the run that sends it (see pregenerate); a run
    // cannot send more than the ceiling's rate, so that many are made for each.
    let onTheFly = 0;
    const made = (count: number, factory = next, cycle = false) => {
      progress(`signing ${fmtCount(count)} transactions for the next run`, undefined, false);
      const pool = pregenerate(factory, count, cycle);
      return {
        next: pool.next,
        done: () => {
          onTheFly += pool.onTheFly;
        },
      };
    };
    const forLoad = (factor: number) => Math.ceil(ceilingRps * (LOAD_WARMUP_S + LOAD_S) * factor);
    let ceilingRps = 0; // until measured

    const ceilingTxs = made(100_000, next, true);
    progress('ceiling: bare node:http, full load', LOAD_S);
    const ceilingLoad = await withServer(startCeiling, (server) =>
      measureLoad({
        url: server.url,
        path: '/',
        headers: {},
        nextBody: bodies('sendTransaction', ceilingTxs.next),
        durationS: LOAD_S,
        connections: CONNECTIONS,
      }),
    );
    ceilingTxs.done();
    ceilingRps = ceilingLoad.rps;

    const sink =
      (name: string, extra: string[] = []) =>
      () =>
        startSlipway(path.join(work, name), ['--upstream', 'sink', ...extra]);
    const singles = made(forLoad(0.6));
    progress('Slipway sendTransaction, everything on, sink upstream', LOAD_S);
    const verified = await withServer(sink('verify-on'), async (server) => {
      const headers = { 'x-api-key': server.key! };
      const sendTransaction = await measureLoad({
        url: server.url,
        path: '/',
        headers,
        nextBody: bodies('sendTransaction', singles.next),
        durationS: LOAD_S,
        connections: CONNECTIONS,
      });
      singles.done();
      // Batches and bundles carry five transactions a request: their transactions/s came
      // within 0.82-0.87 of the ceiling's requests/s in some runs, so size for all of it.
      const batchTxs = made(forLoad(1.0));
      progress('Slipway /submit-batch, 5 transactions', LOAD_S);
      const batch = await measureLoad({
        url: server.url,
        path: '/submit-batch',
        headers,
        nextBody: bodies('submitBatch', batchTxs.next),
        durationS: LOAD_S,
        connections: CONNECTIONS,
      });
      batchTxs.done();
      const bundleTxs = made(forLoad(1.0));
      progress('Slipway sendBundle, 5 transactions', LOAD_S);
      const bundle = await measureLoad({
        url: server.url,
        path: '/',
        headers,
        nextBody: bodies('sendBundle', bundleTxs.next),
        durationS: LOAD_S,
        connections: CONNECTIONS,
      });
      bundleTxs.done();
      return { sendTransaction, batch, bundle };
    });

    // Servers of their own for latency: what a gateway at a steady moderate rate answers, not
    // the after-effects of the saturation runs above (WAL checkpoints, index catch-up).
    const fixedTxs = made(Math.ceil((FIXED_RATE * (WARMUP_MS + FIXED_S * 1000 + 2_000)) / 1000) * 2);
    progress(
      `ceiling and Slipway sendTransaction at ${FIXED_RATE} requests/s, open loop, alternating rounds`,
      2 * (FIXED_S + WARMUP_MS / 1000),
    );
    const [ceilingFixedRate, fixedRate] = await withServer(startCeiling, (bare) =>
      withServer(sink('fixed-rate'), (server) =>
        measureAtFixedRate(
          { url: bare.url, headers: {}, nextBody: bodies('sendTransaction', fixedTxs.next) },
          { url: server.url, headers: { 'x-api-key': server.key! }, nextBody: bodies('sendTransaction', fixedTxs.next) },
        ),
      ),
    );
    fixedTxs.done();
    const ceiling = { load: ceilingLoad, fixedRate: ceilingFixedRate };

    const unverified = made(forLoad(0.8));
    progress('Slipway sendTransaction, signature verification off', LOAD_S);
    const noVerify = await withServer(sink('verify-off', ['--verify-signatures', 'false']), (server) =>
      measureLoad({
        url: server.url,
        path: '/',
        headers: { 'x-api-key': server.key! },
        nextBody: bodies('sendTransaction', unverified.next),
        durationS: LOAD_S,
        connections: CONNECTIONS,
      }),
    );
    unverified.done();

    // The runs above log at warn; a deployment's default is info, a line per submission.
    const logged = made(forLoad(0.6));
    progress('Slipway sendTransaction at log level info (a log line per submission)', LOAD_S);
    const loggedAtInfo = await withServer(sink('log-info', ['--log-level', 'info']), (server) =>
      measureLoad({
        url: server.url,
        path: '/',
        headers: { 'x-api-key': server.key! },
        nextBody: bodies('sendTransaction', logged.next),
        durationS: LOAD_S,
        connections: CONNECTIONS,
      }),
    );
    logged.done();

    const embeddedLedger = await withServer(
      () => startSlipway(path.join(work, 'embedded'), []),
      async (server) => {
        const headers = { 'content-type': 'application/json', 'x-api-key': server.key! };
        const call = async (method: string, params: unknown[]) =>
          (
            (await (
              await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
            ).json()) as { result: any }
          ).result;
        const funded = newSigner();
        await call('requestAirdrop', [bs58.encode(funded.publicKey), 1_000_000_000_000]);
        const blockhash = Buffer.from(bs58.decode((await call('getLatestBlockhash', [])).value.blockhash));
        const real = made(forLoad(0.4), transferFactory(funded, newSigner().publicKey, blockhash));
        progress('Slipway end to end on the embedded ledger', LOAD_S);
        const load = await measureLoad({
          url: server.url,
          path: '/',
          headers: { 'x-api-key': server.key! },
          nextBody: bodies('sendTransaction', real.next),
          durationS: LOAD_S,
          connections: CONNECTIONS,
        });
        real.done();
        return load;
      },
    );

    progress('cost parts in isolation');
    const costParts = await measureCostParts(MODE === 'quick' ? 1000 : 3000);

    const tpu = await measureTpuCost(MODE === 'quick', (what, seconds) => progress(what, seconds));

    let soak: SoakResult | undefined;
    if (MODE === 'soak') {
      const soakServer = () =>
        startSlipway(path.join(work, 'soak'), ['--upstream', 'sink'], { SLIPWAY_DUPLICATE_TTL_MS: String(SOAK_DUPLICATE_TTL_MS) });
      const soakTxs = made(Math.ceil(ceilingRps * SOAK_S * 0.6));
      progress('soak: sendTransaction at full load, resident set sampled each second', SOAK_S);
      soak = await withServer(soakServer, async (server) => {
        const samples: number[] = [];
        const sampler = setInterval(() => samples.push(rssMiB(server.pid)), 1000);
        const load = await runLoad({
          url: server.url,
          path: '/',
          headers: { 'x-api-key': server.key! },
          nextBody: bodies('sendTransaction', soakTxs.next),
          durationS: SOAK_S,
          connections: CONNECTIONS,
        });
        clearInterval(sampler);
        soakTxs.done();
        return { seconds: SOAK_S, rps: load.rps, duplicateTtlMs: SOAK_DUPLICATE_TTL_MS, rssMiB: samples };
      });
    }
    // Last: it runs a cluster and three gateways at a moderate rate, measuring landing, not speed.
    const landing = await measureLandingByRoute(MODE === 'quick', (what, seconds) => progress(what, seconds === 0 ? undefined : seconds));

    if (spinner) clearInterval(spinner);
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');

    const results: BenchResults = {
      mode: MODE,
      machine: {
        cores: os.cpus().length,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
      },
      startedAt,
      ceiling,
      slipway: {
        sendTransaction: verified.sendTransaction,
        sendTransactionNoVerify: noVerify,
        sendTransactionLogInfo: loggedAtInfo,
        submitBatch: { ...verified.batch, tps: verified.batch.rps * 5 },
        sendBundle: { ...verified.bundle, tps: verified.bundle.rps * 5 },
        fixedRate,
        embeddedLedger,
      },
      costParts,
      tpu,
      tpu_cpu_us_per_tx: tpu.oneLeader.cpuUsPerTx,
      udp_send_cpu_us_per_datagram: tpu.floor.cpuUsPerDatagram,
      tpu_cpu_per_tx_vs_udp_send: tpu.oneLeader.cpuUsPerTx / tpu.floor.cpuUsPerDatagram,
      signedDuringRuns: onTheFly,
      ...(soak === undefined ? {} : { soak }),
      landing,
      ...landingFigures(landing),
      ratios: {
        sendTransaction_vs_ceiling_rps: verified.sendTransaction.rps / ceiling.load.rps,
        sendTransaction_noverify_vs_ceiling_rps: noVerify.rps / ceiling.load.rps,
        sendTransaction_loginfo_vs_logwarn_rps: loggedAtInfo.rps / verified.sendTransaction.rps,
        submitBatch_tps_vs_ceiling_rps: (verified.batch.rps * 5) / ceiling.load.rps,
        sendBundle_tps_vs_ceiling_rps: (verified.bundle.rps * 5) / ceiling.load.rps,
        p99_vs_ceiling_at_fixed_rate: fixedRate.p99 / ceiling.fixedRate.p99,
        p50_vs_ceiling_at_fixed_rate: fixedRate.p50 / ceiling.fixedRate.p50,
        tpu_cpu_per_tx_vs_udp_send: tpu.oneLeader.cpuUsPerTx / tpu.floor.cpuUsPerDatagram,
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
