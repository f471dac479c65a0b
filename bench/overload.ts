/**
 * `npm run overload [-- --max-in-flight N]`: a real gateway (`bin/slipway serve` on the
 * embedded ledger, default limits unless given) offered more than it can serve, and what it
 * does about it.
 *
 * 1. Capacity: /submit-batch (5 real transfers a request) at full speed, closed loop.
 * 2. Open loop, from three client addresses (127.0.0.2–4, 800 connections each: more than the gateway takes in at once): half the
 *    capacity for 5 s, three times it for 10 s, half again for 10 s. Each request is timed
 *    from when it was due, so queueing anywhere (client or server) counts.
 * 3. `GET /health` every 100 ms throughout, on a connection of its own.
 * 4. Every transaction answered with success is looked up on the ledger: it must have landed.
 *
 * Prints offered vs served per phase, the share shed with 503, the p99 of served requests,
 * the time from the end of the overload until the gateway served without shedding again,
 * and the count of successes that did not land (must be 0). Exits 1 if any was lost.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import bs58 from 'bs58';
import * as hdr from 'hdr-histogram-js';
import { Pool } from 'undici';
import { runLoad } from './load';
import { startSlipway } from './processes';
import { newSigner, transferFactory } from './signed-transactions';

const BATCH = 5;
const CLIENT_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const CONNECTIONS_PER_CLIENT = 800;
const PHASES = [
  { name: 'below capacity', factor: 0.5, seconds: 5 },
  { name: 'overload', factor: 3, seconds: 10 },
  { name: 'after', factor: 0.5, seconds: 10 },
] as const;

interface Sample {
  readonly dueMs: number;
  readonly phase: number;
  status: number;
  latencyMs: number;
}

async function main(): Promise<number> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-overload-'));
  // The gateway on one core, this load generator on the other: on a small machine a generator
  // sharing the gateway's cores would measure its own lag (and the gateway would lend it CPU).
  const cores = os.cpus().length;
  const { values } = parseArgs({ options: { 'max-in-flight': { type: 'string' } } });
  const limits: Record<string, string> =
    values['max-in-flight'] === undefined ? {} : { SLIPWAY_MAX_IN_FLIGHT_REQUESTS: values['max-in-flight'] };
  const server = await startSlipway(path.join(work, 'data'), [], limits, cores > 1 ? String(cores - 1) : undefined);
  process.stdout.write(
    `overload: gateway with maxInFlightRequests ${values['max-in-flight'] ?? 'default (1024)'}, pinned to core ${cores - 1}\n`,
  );
  if (cores > 1) execFileSync('taskset', ['-cp', `0-${cores - 2}`, String(process.pid)], { stdio: 'ignore' });
  try {
    const headers = { 'content-type': 'application/json', 'x-api-key': server.key! };
    const call = async (method: string, params: unknown[]) => {
      const answer = (await (
        await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
      ).json()) as { result?: any; error?: unknown };
      if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
      return answer.result;
    };
    const payer = newSigner();
    await call('requestAirdrop', [bs58.encode(payer.publicKey), 1_000_000_000_000]);
    const blockhash = Buffer.from(bs58.decode((await call('getLatestBlockhash', [])).value.blockhash));
    const nextTx = transferFactory(payer, newSigner().publicKey, blockhash);
    const batchBody = (txs: string[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, params: { transactions: txs, options: [] } });
    const nextBatch = () => batchBody(Array.from({ length: BATCH }, nextTx));

    process.stdout.write('overload: measuring capacity (/submit-batch, 5 transfers each, 3 s closed loop)\n');
    const capacity = (
      await runLoad({ url: server.url, path: '/submit-batch', headers, nextBody: nextBatch, durationS: 3, connections: 32 })
    ).rps;
    process.stdout.write(`  capacity ≈ ${capacity.toFixed(0)} batches/s (${(capacity * BATCH).toFixed(0)} transactions/s)\n`);

    // Every body is signed before the open loop starts: signing during it would take the server's CPU.
    const plan = PHASES.map((phase) => Math.round(capacity * phase.factor * phase.seconds));
    const bodies = Array.from({ length: plan.reduce((a, b) => a + b, 0) }, nextBatch);
    process.stdout.write(
      `  ${bodies.length} batches signed; offered: ${PHASES.map((p) => `${p.name} ${(capacity * p.factor).toFixed(0)}/s for ${p.seconds} s`).join(', ')}\n`,
    );

    const pools = CLIENT_ADDRESSES.map(
      (localAddress) => new Pool(server.url, { connections: CONNECTIONS_PER_CLIENT, pipelining: 1, localAddress }),
    );
    const healthPool = new Pool(server.url, { connections: 1 });
    // Clients that already hold their connections, as busy clients do: the overload is then in
    // requests, not in new connections waiting to be accepted.
    const warm = performance.now();
    await Promise.all(
      pools.flatMap((pool) =>
        Array.from({ length: CONNECTIONS_PER_CLIENT }, () => pool.request({ path: '/health', method: 'GET' }).then((r) => r.body.text())),
      ),
    );
    process.stdout.write(
      `  ${pools.length * CONNECTIONS_PER_CLIENT} connections opened in ${((performance.now() - warm) / 1000).toFixed(1)} s\n`,
    );
    const samples: Sample[] = [];
    const health: { atMs: number; status: number; latencyMs: number }[] = [];
    const landedCheck: string[] = [];
    const pending = new Set<Promise<void>>();
    const started = performance.now();
    let sent = 0;

    let worstLateMs = 0;
    const send = (body: string, phase: number, dueMs: number) => {
      worstLateMs = Math.max(worstLateMs, performance.now() - started - dueMs);
      const sample: Sample = { dueMs, phase, status: 0, latencyMs: 0 };
      samples.push(sample);
      const pool = pools[sent++ % pools.length]!;
      const p = pool
        .request({ path: '/submit-batch', method: 'POST', headers, body })
        .then(async (response) => {
          const text = await response.body.text();
          sample.status = response.statusCode;
          if (response.statusCode === 200) landedCheck.push(...(JSON.parse(text) as { signatures: string[] }).signatures);
        })
        .catch(() => {
          sample.status = -1; // no answer: connection refused or reset
        })
        .finally(() => {
          sample.latencyMs = performance.now() - started - dueMs;
          pending.delete(p);
        });
      pending.add(p);
    };

    const healthTimer = setInterval(() => {
      const at = performance.now();
      healthPool
        .request({ path: '/health', method: 'GET' })
        .then(async (response) => {
          await response.body.text();
          health.push({ atMs: at - started, status: response.statusCode, latencyMs: performance.now() - at });
        })
        .catch(() => health.push({ atMs: at - started, status: -1, latencyMs: performance.now() - at }));
    }, 100);

    let next = 0;
    let phaseStartMs = 0;
    for (const [index, phase] of PHASES.entries()) {
      process.stdout.write(`  ${phase.name}…\n`);
      const rate = capacity * phase.factor;
      const count = plan[index]!;
      let done = 0;
      await new Promise<void>((resolve) => {
        const tick = () => {
          const nowMs = performance.now() - started;
          while (done < count && phaseStartMs + (done * 1000) / rate <= nowMs) {
            send(bodies[next]!, index, phaseStartMs + (done * 1000) / rate);
            bodies[next++] = '';
            done++;
          }
          if (done >= count) return resolve();
          setTimeout(tick, 1);
        };
        tick();
      });
      phaseStartMs += phase.seconds * 1000;
    }
    await Promise.all(pending);
    clearInterval(healthTimer);
    await Promise.all([...pools, healthPool].map((p) => p.close()));

    // The figures, per phase.
    const overloadEndMs = (PHASES[0].seconds + PHASES[1].seconds) * 1000;
    process.stdout.write('\nphase            offered/s  served/s  shed 503  other  p50 served  p99 served\n');
    for (const [index, phase] of PHASES.entries()) {
      const mine = samples.filter((s) => s.phase === index);
      const served = mine.filter((s) => s.status === 200);
      const shed = mine.filter((s) => s.status === 503).length;
      const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
      for (const s of served) histogram.recordValue(Math.max(1, Math.round(s.latencyMs)));
      process.stdout.write(
        `${phase.name.padEnd(16)} ${(mine.length / phase.seconds).toFixed(0).padStart(9)} ${(served.length / phase.seconds).toFixed(0).padStart(9)} ${`${((100 * shed) / mine.length).toFixed(1)} %`.padStart(9)} ${String(mine.length - served.length - shed).padStart(6)} ${`${histogram.getValueAtPercentile(50)} ms`.padStart(11)} ${`${histogram.getValueAtPercentile(99)} ms`.padStart(11)}\n`,
      );
    }
    // Recovery: from the end of the overload to the start of the first second in which every
    // request due was served (no 503) and 99 % of them within 4 × the p99 below capacity.
    const before = samples
      .filter((s) => s.phase === 0 && s.status === 200)
      .map((s) => s.latencyMs)
      .sort((a, b) => a - b);
    const bound = Math.max(50, 4 * (before[Math.floor(before.length * 0.99)] ?? 0));
    const after = samples.filter((s) => s.phase === 2);
    let recoveryMs: number | undefined;
    for (let t = overloadEndMs; t + 1000 <= overloadEndMs + PHASES[2].seconds * 1000; t += 50) {
      const second = after.filter((s) => s.dueMs >= t && s.dueMs < t + 1000);
      const slow = second.filter((s) => s.latencyMs > bound).length;
      if (second.every((s) => s.status === 200) && slow <= second.length * 0.01) {
        recoveryMs = t - overloadEndMs;
        break;
      }
    }
    process.stdout.write(
      `recovery: ${recoveryMs === undefined ? 'not within the run' : `${recoveryMs} ms`} after the overload ended (the first second with no 503 and 99 % served within ${bound.toFixed(0)} ms, 4 × the p99 below capacity)\n`,
    );
    const healthStatuses = new Map<number, number>();
    for (const h of health) healthStatuses.set(h.status, (healthStatuses.get(h.status) ?? 0) + 1);
    const healthDuring = health.filter((h) => h.atMs >= PHASES[0].seconds * 1000 && h.atMs < overloadEndMs).map((h) => h.latencyMs);
    process.stdout.write(
      `/health: ${[...healthStatuses].map(([s, n]) => `${n} × ${s}`).join(', ')}; slowest during the overload ${Math.max(...healthDuring).toFixed(0)} ms\n`,
    );

    // Nothing answered with success may be lost: every one of those transactions is on the ledger.
    let missing = 0;
    for (let i = 0; i < landedCheck.length; i += 256) {
      const statuses = (await call('getSignatureStatuses', [landedCheck.slice(i, i + 256)])).value as ({ err: unknown } | null)[];
      missing += statuses.filter((s) => s === null || s.err !== null).length;
    }
    process.stdout.write(
      `transactions answered with success: ${landedCheck.length}; landed: ${landedCheck.length - missing}; lost: ${missing}\n`,
    );
    return missing === 0 ? 0 : 1;
  } finally {
    await server.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`overload: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
