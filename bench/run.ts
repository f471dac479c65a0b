/**
 * `npm run bench [-- --quick | --soak | --runs N]`: Slipway beside the machine's ceiling, in
 * one run, so that the ratios hold on a noisy shared machine.
 *
 * 1. The core measurement (core-runs.ts), repeated (3 times by default, once with --quick):
 *    the bare node:http ceiling and Slipway at full load (sendTransaction with and without
 *    signature verification, at log level info, /submit-batch, sendBundle), each with the
 *    server's CPU time per request; latency at 25 % of the ceiling's capacity (both) and at
 *    50 % of Slipway's own. The headline ratios are the medians of the repeats, with their spread.
 * 2. End to end on the embedded ledger, for reference.
 * 3. The cost parts in isolation.
 * 4. Sending to a TPU over QUIC: CPU per transaction beside a dgram.send floor (tpu-cost.ts).
 * 5. Landing by route: RPC fan-out, Jito and TPU under the same offered load on the local
 *    cluster, landed % and slots from request to landed (landing-by-route.ts).
 * With --soak: 60 s of full load with the resident set sampled every second.
 *
 * Writes bench/results/latest.json (with the commit measured and the machine's state) and
 * bench/results/latest.svg.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bs58 from 'bs58';
import { bodies, measureCore, withServer, type CoreRun } from './core-runs';
import { measureCostParts } from './cost-parts';
import { measureTpuCost } from './tpu-cost';
import { landingStatistics, measureLandingByRoute } from './landing-by-route';
import { runLoad } from './load';
import { commitMeasured } from './machine-state';
import { median } from './median';
import { rssMiB, startSlipway } from './processes';
import { writeReport } from './report';
import type { BenchResults, SoakResult } from './bench-results';
import { newSigner, pregenerate, transferFactory } from './signed-transactions';

const MODE = process.argv.includes('--quick') ? 'quick' : process.argv.includes('--soak') ? 'soak' : 'default';
const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1] ?? NaN) || (MODE === 'quick' ? 1 : 3);
const LOAD_S = MODE === 'quick' ? 2 : 10;
const CONNECTIONS = 32;
const SOAK_S = 60;
/**
 * The soak shortens the duplicate window so that every window fills within the run and the
 * resident set can be seen to level off (with the default 120 s it would still be filling).
 */
const SOAK_DUPLICATE_TTL_MS = 15_000;

let step = 0;
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
    process.stderr.write(`\r\x1b[K${frames[frame++ % frames.length]} [${shown}] ${what}${of}`);
  };
  if (!process.stderr.isTTY) {
    process.stderr.write(`[${shown}] ${what}${seconds === undefined ? '' : ` (${seconds} s)`}\n`);
    return;
  }
  draw();
  spinner = setInterval(draw, 250);
}

const fmtCount = (n: number) => n.toLocaleString('en-US');

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-bench-'));
  const payer = newSigner();
  const next = transferFactory(payer, newSigner().publicKey, Buffer.alloc(32, 7));
  const startedAt = new Date().toISOString();
  const measured = commitMeasured();
  try {
    // Every transaction is signed before the run that sends it (see pregenerate): signing
    // while the load runs would take the load generator's CPU time from the server.
    let onTheFly = 0;
    const made = (count: number, factory = next, cycle = false) => {
      progress(`signing ${fmtCount(count)} transactions for the next run`, undefined, false);
      const pool = pregenerate(factory, count, cycle);
      return {
        next: pool.next,
        refill: (factor: number) => pool.refill(factor),
        done: () => {
          onTheFly += pool.onTheFly;
          // Named where it happens: signing during a run takes the load generator's CPU from the server.
          if (pool.onTheFly > 0)
            process.stderr.write(
              `\n  (${fmtCount(pool.onTheFly)} signed during the run above: its pool, first made of ${fmtCount(count)}, ran out)\n`,
            );
        },
      };
    };

    const runs: CoreRun[] = [];
    for (let i = 0; i < RUNS; i++) {
      runs.push(
        await measureCore({
          work,
          quick: MODE === 'quick',
          made: (count, cycle) => made(count, next, cycle),
          progress: (what, seconds) => progress(`run ${i + 1} of ${RUNS}: ${what}`, seconds),
        }),
      );
    }
    const ratioNames = Object.keys(runs[0]!.ratios);
    const ratios = Object.fromEntries(ratioNames.map((name) => [name, median(runs.map((run) => run.ratios[name]!))]));
    const spread = Object.fromEntries(
      ratioNames.map((name) => {
        const values = runs.map((run) => run.ratios[name]!);
        return [name, { min: Math.min(...values), max: Math.max(...values) }];
      }),
    );
    // The run shown in full: the one whose headline (CPU excluding verification against the ceiling) is the median.
    const headline = 'sendTransaction_cpu_excl_verify_vs_ceiling';
    const shown = [...runs].sort((a, b) => a.ratios[headline]! - b.ratios[headline]!)[Math.floor(runs.length / 2)]!;
    const ceilingRps = shown.ceiling.load.rps;
    const forLoad = (factor: number) => Math.ceil(ceilingRps * (LOAD_S + 2) * factor);

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
        const options = {
          url: server.url,
          path: '/',
          headers: { 'x-api-key': server.key! },
          nextBody: bodies('sendTransaction', real.next),
          connections: CONNECTIONS,
        };
        await runLoad({ ...options, durationS: MODE === 'quick' ? 1 : 2 });
        const load = await runLoad({ ...options, durationS: LOAD_S, pid: server.pid });
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
      commit: measured.commit,
      uncommittedChanges: measured.dirty,
      machine: {
        cores: os.cpus().length,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
      },
      machineState: {
        ceilingRps: median(runs.map((run) => run.ceiling.load.rps)),
        ceilingCpuUsPerRequest: median(runs.map((run) => run.ceiling.load.cpuUsPerRequest ?? NaN)),
        libsodiumVerifyUs: median(runs.map((run) => run.libsodiumVerifyUs)),
        stealPct: median(runs.map((run) => run.stealPct)),
      },
      startedAt,
      runs: runs.length,
      ceiling: shown.ceiling,
      slipway: { ...shown.slipway, embeddedLedger },
      rates: shown.rates,
      eachRun: runs.map((run) => ({
        ceilingRps: run.ceiling.load.rps,
        ceilingCpuUsPerRequest: run.ceiling.load.cpuUsPerRequest ?? NaN,
        libsodiumVerifyUs: run.libsodiumVerifyUs,
        stealPct: run.stealPct,
        ratios: run.ratios,
      })),
      costParts,
      tpu,
      tpu_cpu_us_per_tx: tpu.oneLeader.cpuUsPerTx,
      udp_send_cpu_us_per_datagram: tpu.floor.cpuUsPerDatagram,
      tpu_cpu_per_tx_vs_udp_send: tpu.oneLeader.cpuUsPerTx / tpu.floor.cpuUsPerDatagram,
      signedDuringRuns: onTheFly,
      ...(soak === undefined ? {} : { soak }),
      landing,
      ...landingStatistics(landing),
      ratios: { ...ratios, tpu_cpu_per_tx_vs_udp_send: tpu.oneLeader.cpuUsPerTx / tpu.floor.cpuUsPerDatagram },
      spread,
    };
    writeReport(results, path.resolve(__dirname, '../../bench/results'));
  } finally {
    if (spinner) clearInterval(spinner);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`\nbench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
