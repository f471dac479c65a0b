/**
 * One measurement of Slipway against the machine's ceiling, the part of `npm run bench` that
 * is repeated (run.ts takes the median of the repeats): full load on the bare node:http
 * ceiling and on Slipway's sendTransaction with and without signature verification, in
 * alternating rounds, then Slipway at log level info, /submit-batch and sendBundle, each with
 * the server's CPU time per request,
 * then latency at shares of capacity measured in this same run: the ceiling and Slipway at
 * 25 % of the ceiling's requests/s (alternating rounds), and Slipway at 50 % of its own.
 */
import path from 'node:path';
import type { LoadResult } from './load';
import { runLoad } from './load';
import { createLatencyRecorder, openLoopPool, runOpenLoop, summarize, type LatencyResult } from './open-loop';
import { startCeiling, startSlipway, type ServerProcess } from './processes';
import { libsodiumVerifyMicros, watchSteal } from './machine-state';
import { median } from './median';

export interface CoreRun {
  readonly ceiling: {
    readonly load: LoadResult;
    /** At 25 % of its own requests/s, alternating with Slipway at the same rate. */
    readonly quarter: LatencyResult;
  };
  readonly slipway: {
    readonly sendTransaction: LoadResult;
    readonly sendTransactionNoVerify: LoadResult;
    /** The same as sendTransaction at the default log level (info): the runs above log at warn. */
    readonly sendTransactionLogInfo: LoadResult;
    readonly submitBatch: LoadResult & { tps: number };
    readonly sendBundle: LoadResult & { tps: number };
    /** At 25 % of the ceiling's requests/s. */
    readonly quarter: LatencyResult;
    /** At 50 % of its own requests/s (sendTransaction, everything on). */
    readonly half: LatencyResult;
  };
  /** The offered rates (requests/s): 25 % of the ceiling's, 50 % of Slipway's. */
  readonly rates: { readonly quarter: number; readonly half: number };
  /** One bare libsodium ed25519 verification in this run, µs. */
  readonly libsodiumVerifyUs: number;
  /** The share of all CPU time the host stole during this run, %. */
  readonly stealPct: number;
  readonly ratios: Record<string, number>;
}

/** Pre-signed transactions for one run (bench/signed-transactions.ts, pregenerate). */
export interface SignedPool {
  next(): string;
  /** Between runs: enough for the next one if it sends `factor` times what was sent since the last refill. */
  refill(factor: number): void;
  done(): void;
}

export interface CoreContext {
  readonly work: string;
  readonly quick: boolean;
  /** Pre-signed distinct transactions: `count` of them, from `next()` once made. */
  readonly made: (count: number, cycle?: boolean) => SignedPool;
  readonly progress: (what: string, seconds?: number) => void;
}

const CONNECTIONS = 32;
/** The fixed-rate measurement's rounds: each server gets its time in alternating one-second rounds. */
const ROUND_MS = 1_000;

type Kind = 'sendTransaction' | 'submitBatch' | 'sendBundle';

/** Bodies for one operation: each call a new, distinct, signed set of transactions. */
export function bodies(kind: Kind, next: () => string): () => string {
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

export async function withServer<T>(start: () => Promise<ServerProcess>, run: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await start();
  try {
    return await run(server);
  } finally {
    await server.stop();
  }
}

interface FixedRateTarget {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly nextBody: () => string;
}

export async function measureCore(ctx: CoreContext): Promise<CoreRun> {
  const LOAD_S = ctx.quick ? 2 : 10;
  const LOAD_WARMUP_S = ctx.quick ? 1 : 2;
  // Sixteen 1 s rounds of each server at a fixed rate: with eight, whether one round held a
  // stretch of demand over the two cores decided a run's p99 (the same build 2.4-7.1x within
  // the hour); twice the rounds, the same proportion of such stretches, half the variance.
  const FIXED_S = ctx.quick ? 2 : 16;
  const WARMUP_MS = ctx.quick ? 1_000 : 4_000;
  const steal = watchSteal();

  /** Full load after an unrecorded warm-up (JIT, connections, caches), the server's CPU read around the measured part. */
  const measureLoad = async (server: ServerProcess, path_: string, nextBody: () => string, pool: SignedPool): Promise<LoadResult> => {
    const options = {
      url: server.url,
      path: path_,
      headers: (server.key === undefined ? {} : { 'x-api-key': server.key }) as Record<string, string>,
      nextBody,
      connections: CONNECTIONS,
    };
    await runLoad({ ...options, durationS: LOAD_WARMUP_S });
    pool.refill((LOAD_S / LOAD_WARMUP_S) * 1.5);
    return runLoad({ ...options, durationS: LOAD_S, pid: server.pid });
  };
  // Whole seconds a round (autocannon counts its duration in seconds).
  const ROUNDS = ctx.quick ? 2 : 5;
  /**
   * Full load on each server in turn, in ROUNDS rounds of LOAD_S / ROUNDS seconds (the order
   * rotating each round), after an unrecorded warm-up of each: each server's requests and CPU
   * time summed over its rounds; its latency the median round's. `between` runs after each round.
   */
  const alternate = async (
    targets: { server: ServerProcess; nextBody: () => string; pool: SignedPool }[],
    between: () => void,
  ): Promise<LoadResult[]> => {
    const options = (target: (typeof targets)[number]) => ({
      url: target.server.url,
      path: '/',
      headers: (target.server.key === undefined ? {} : { 'x-api-key': target.server.key }) as Record<string, string>,
      nextBody: target.nextBody,
      connections: CONNECTIONS,
    });
    for (const target of targets) await runLoad({ ...options(target), durationS: LOAD_WARMUP_S });
    // A round is as long as a warm-up: each pool then holds half as much again as its last use, made while the servers idle.
    for (const target of targets) target.pool.refill((LOAD_S / ROUNDS / LOAD_WARMUP_S) * 1.5);
    const rounds: LoadResult[][] = targets.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < targets.length; k++) {
        const which = (round + k) % targets.length;
        const target = targets[which]!;
        rounds[which]!.push(await runLoad({ ...options(target), durationS: LOAD_S / ROUNDS, pid: target.server.pid }));
        target.pool.refill(1.5);
        between();
      }
    }
    return rounds.map((each) => {
      const requests = each.reduce((sum, r) => sum + r.requests, 0);
      const cpu = each.reduce((sum, r) => sum + (r.cpuUsPerRequest ?? NaN) * r.requests, 0);
      return {
        rps: requests / LOAD_S,
        requests,
        failed: each.reduce((sum, r) => sum + r.failed, 0),
        latencyMs: { p50: median(each.map((r) => r.latencyMs.p50)), p99: median(each.map((r) => r.latencyMs.p99)) },
        cpuUsPerRequest: cpu / Math.max(1, requests),
      };
    });
  };
  /** Open loop at `rate`: an unrecorded warm-up each, then alternating one-second rounds (A B B A …) into one histogram per server. */
  const atRate = async (rate: number, targets: FixedRateTarget[]): Promise<LatencyResult[]> => {
    const runs = targets.map((target) => ({
      pool: openLoopPool(target.url, CONNECTIONS),
      recorder: createLatencyRecorder(),
      options: { url: target.url, path: '/', headers: target.headers, nextBody: target.nextBody, rate, connections: CONNECTIONS },
    }));
    for (const r of runs) await runOpenLoop({ ...r.options, durationMs: WARMUP_MS }, createLatencyRecorder(), r.pool);
    const rounds = Math.round((FIXED_S * 1000) / ROUND_MS);
    for (let round = 0; round < rounds; round++) {
      for (const r of round % 2 === 0 ? runs : [...runs].reverse())
        await runOpenLoop({ ...r.options, durationMs: ROUND_MS }, r.recorder, r.pool);
    }
    await Promise.all(runs.map((r) => r.pool.close()));
    return runs.map((r) => summarize(r.recorder));
  };
  const sink =
    (name: string, extra: string[] = []) =>
    () =>
      startSlipway(path.join(ctx.work, `${name}-${Date.now()}`), ['--upstream', 'sink', ...extra]);

  // The ceiling, everything on and verification off in alternating rounds (rotating order),
  // on three servers started together: the split of Slipway's cost into verification and the
  // rest is a difference of two of them, and the machine's speed drifts from one minute to
  // the next (one run of three gave 3.35× / 1.21× measured one after the other, the next
  // 2.04× / 2.11×). The bare libsodium verification is timed between the rounds, in the same
  // minutes. The servers not being loaded are idle meanwhile.
  const ceilingTxs = ctx.made(100_000, true);
  const libsodiumSamples: number[] = [];
  const [ceilingLoad, verifiedSend, noVerify] = (await withServer(startCeiling, (bare) =>
    withServer(sink('verify-on'), (on) =>
      withServer(sink('verify-off', ['--verify-signatures', 'false']), async (off) => {
        // The ceiling's requests/s first, to size the pools of distinct transactions.
        const warm = await runLoad({
          url: bare.url,
          path: '/',
          headers: {},
          nextBody: bodies('sendTransaction', ceilingTxs.next),
          connections: CONNECTIONS,
          durationS: LOAD_WARMUP_S,
        });
        const size = (factor: number) => Math.ceil(warm.rps * (LOAD_WARMUP_S + LOAD_S) * factor);
        const singles = ctx.made(size(0.6));
        const unverified = ctx.made(size(0.8));
        ctx.progress(
          `ceiling (bare node:http), Slipway sendTransaction everything on, and verification off: full load, ${ROUNDS} alternating rounds each`,
          3 * (LOAD_S + LOAD_WARMUP_S),
        );
        try {
          return await alternate(
            [
              { server: bare, nextBody: bodies('sendTransaction', ceilingTxs.next), pool: ceilingTxs },
              { server: on, nextBody: bodies('sendTransaction', singles.next), pool: singles },
              { server: off, nextBody: bodies('sendTransaction', unverified.next), pool: unverified },
            ],
            () => libsodiumSamples.push(libsodiumVerifyMicros(ctx.quick ? 200 : 500)),
          );
        } finally {
          singles.done();
          unverified.done();
        }
      }),
    ),
  )) as [LoadResult, LoadResult, LoadResult];
  ceilingTxs.done();
  const forLoad = (factor: number) => Math.ceil(ceilingLoad.rps * (LOAD_WARMUP_S + LOAD_S) * factor);

  const verified = await withServer(sink('batches'), async (server) => {
    // Batches and bundles carry five transactions a request: their transactions/s came to
    // 0.82-0.87 of the ceiling's requests/s in some states and 1.0-1.56 in the slow one, and
    // the refill after a cold warm-up fell short (26,910 signed during one batch run), so size
    // for all of it from the start.
    const batchTxs = ctx.made(forLoad(1.6));
    ctx.progress('Slipway /submit-batch, 5 transactions', LOAD_S + LOAD_WARMUP_S);
    const batch = await measureLoad(server, '/submit-batch', bodies('submitBatch', batchTxs.next), batchTxs);
    batchTxs.done();
    const bundleTxs = ctx.made(forLoad(1.6));
    ctx.progress('Slipway sendBundle, 5 transactions', LOAD_S + LOAD_WARMUP_S);
    const bundle = await measureLoad(server, '/', bodies('sendBundle', bundleTxs.next), bundleTxs);
    bundleTxs.done();
    return { sendTransaction: verifiedSend, batch, bundle };
  });

  // The runs above log at warn; a deployment's default is info, a line per submission.
  const logged = ctx.made(forLoad(0.6));
  ctx.progress('Slipway sendTransaction at log level info (a log line per submission)', LOAD_S + LOAD_WARMUP_S);
  const loggedAtInfo = await withServer(sink('log-info', ['--log-level', 'info']), (server) =>
    measureLoad(server, '/', bodies('sendTransaction', logged.next), logged),
  );
  logged.done();

  // Servers of their own for latency: what a gateway at a steady share of its capacity
  // answers, not the after-effects of the saturation runs above (WAL checkpoints, index catch-up).
  const quarterRate = Math.max(100, Math.round(ceilingLoad.rps * 0.25));
  const halfRate = Math.max(100, Math.round(verified.sendTransaction.rps * 0.5));
  const quarterTxs = ctx.made(Math.ceil((quarterRate * (WARMUP_MS + FIXED_S * 1000 + 2_000)) / 1000) * 2);
  ctx.progress(
    `ceiling and Slipway at ${quarterRate} requests/s (25 % of the ceiling), open loop, alternating rounds`,
    2 * (FIXED_S + WARMUP_MS / 1000),
  );
  const [ceilingQuarter, slipwayQuarter] = await withServer(startCeiling, (bare) =>
    withServer(sink('quarter'), (server) =>
      atRate(quarterRate, [
        { url: bare.url, headers: {}, nextBody: bodies('sendTransaction', quarterTxs.next) },
        { url: server.url, headers: { 'x-api-key': server.key! }, nextBody: bodies('sendTransaction', quarterTxs.next) },
      ]),
    ),
  );
  quarterTxs.done();
  const halfTxs = ctx.made(Math.ceil((halfRate * (WARMUP_MS + FIXED_S * 1000 + 2_000)) / 1000));
  ctx.progress(`Slipway at ${halfRate} requests/s (50 % of its own capacity), open loop`, FIXED_S + WARMUP_MS / 1000);
  const [slipwayHalf] = await withServer(sink('half'), (server) =>
    atRate(halfRate, [{ url: server.url, headers: { 'x-api-key': server.key! }, nextBody: bodies('sendTransaction', halfTxs.next) }]),
  );
  halfTxs.done();

  const libsodiumVerifyUs = median(libsodiumSamples);
  const stealPct = steal.stop() * 100;

  const cpu = (l: LoadResult) => l.cpuUsPerRequest ?? NaN;
  const ceilingCpu = cpu(ceilingLoad);
  return {
    ceiling: { load: ceilingLoad, quarter: ceilingQuarter! },
    slipway: {
      sendTransaction: verified.sendTransaction,
      sendTransactionNoVerify: noVerify,
      sendTransactionLogInfo: loggedAtInfo,
      submitBatch: { ...verified.batch, tps: verified.batch.rps * 5 },
      sendBundle: { ...verified.bundle, tps: verified.bundle.rps * 5 },
      quarter: slipwayQuarter!,
      half: slipwayHalf!,
    },
    rates: { quarter: quarterRate, half: halfRate },
    libsodiumVerifyUs,
    stealPct,
    ratios: {
      // CPU time per request: what holds however fast the machine is that day.
      sendTransaction_cpu_excl_verify_vs_ceiling: cpu(noVerify) / ceilingCpu,
      verify_cpu_vs_libsodium: (cpu(verified.sendTransaction) - cpu(noVerify)) / libsodiumVerifyUs,
      submitBatch_cpu_per_tx_vs_sendTransaction: cpu(verified.batch) / 5 / cpu(verified.sendTransaction),
      sendBundle_cpu_per_tx_vs_sendTransaction: cpu(verified.bundle) / 5 / cpu(verified.sendTransaction),
      sendTransaction_cpu_vs_ceiling: cpu(verified.sendTransaction) / ceilingCpu,
      p99_vs_ceiling_at_quarter_capacity: slipwayQuarter!.p99 / ceilingQuarter!.p99,
      // Throughput, as before: these move with the machine's state (docs/PERFORMANCE.md).
      sendTransaction_vs_ceiling_rps: verified.sendTransaction.rps / ceilingLoad.rps,
      sendTransaction_noverify_vs_ceiling_rps: noVerify.rps / ceilingLoad.rps,
      sendTransaction_loginfo_vs_logwarn_rps: loggedAtInfo.rps / verified.sendTransaction.rps,
      submitBatch_tps_vs_ceiling_rps: (verified.batch.rps * 5) / ceilingLoad.rps,
      sendBundle_tps_vs_ceiling_rps: (verified.bundle.rps * 5) / ceilingLoad.rps,
      p99_vs_ceiling_at_fixed_rate: slipwayQuarter!.p99 / ceilingQuarter!.p99,
      p50_vs_ceiling_at_fixed_rate: slipwayQuarter!.p50 / ceilingQuarter!.p50,
    },
  };
}
