/**
 * Landing by route, measured (the last step of `npm run bench`; alone: `node
 * dist/bench/landing-by-route.js [--quick]`). One local cluster (`bin/slipway ledger`, its
 * own process, 400 ms slots as on mainnet) and three gateways (processes of their own), one
 * per route: RPC fan-out, Jito, TPU. The same offered load goes through each at the same
 * time: real signed transfers on a fixed schedule, each route's from a payer of its own, the
 * cluster's slot asked of the node just before each tick's sends. Then every transaction is
 * followed on the node until it landed or can no longer land (its blockhash expired), or a
 * bounded wait ends; per route: sent, accepted, landed %, slots from request to landed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import type { LandingByRoute, LandingStatistics, RouteLanding } from './landing-shapes';
import { ROUTE_DESCRIPTIONS, ROUTE_NAMES, startGateway, type RouteName } from './landing-gateways';
import { followUntilSettled, jsonRpc, offerLoad, pathsOf, RouteRun, untilReady } from './landing-load';
import { percentile } from './median';
import { cpuDuring } from './proc-cpu';
import { startLedger, type ServerProcess } from './processes';

/** Mainnet's slot time: slots from request to landed then read as they would on mainnet. */
const SLOT_MS = 400;
/**
 * Transactions a second per route (150 in all): far below what a gateway or the cluster
 * takes on two cores (the cluster executes a transfer in about 40 µs; a gateway answers
 * thousands a second), so that what is measured is the route, not a queue on a busy core.
 */
const RATE_PER_ROUTE = 50;

function summarizeRoute(run: RouteRun, paths: Record<string, number>): RouteLanding {
  const { sent } = run;
  const landed = sent.filter((entry) => entry.landedSlot !== undefined);
  const deltas = landed.map((entry) => entry.landedSlot! - entry.slot).sort((a, b) => a - b);
  const answers = sent.map((entry) => entry.answerMs ?? Infinity).sort((a, b) => a - b);
  const refusals: Record<string, number> = {};
  for (const entry of sent) {
    if (entry.accepted === true) continue;
    const why = entry.refusal ?? 'no answer';
    if (why in refusals || Object.keys(refusals).length < 5) refusals[why] = (refusals[why] ?? 0) + 1;
  }
  const round = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);
  const slotHistogram: Record<string, number> = {};
  for (const delta of deltas) slotHistogram[delta] = (slotHistogram[delta] ?? 0) + 1;
  const answerMsBySlots: Record<string, number> = {};
  for (const delta of Object.keys(slotHistogram)) {
    const times = landed
      .filter((entry) => entry.landedSlot! - entry.slot === Number(delta))
      .map((entry) => entry.answerMs!)
      .sort((a, b) => a - b);
    answerMsBySlots[delta] = round(percentile(times, 50))!;
  }
  return {
    route: run.route,
    description: ROUTE_DESCRIPTIONS[run.route],
    sent: sent.length,
    accepted: sent.filter((entry) => entry.accepted === true).length,
    refused: sent.filter((entry) => entry.accepted !== true).length,
    refusals,
    landed: landed.length,
    landedPct: sent.length === 0 ? 0 : (100 * landed.length) / sent.length,
    failedOnChain: landed.filter((entry) => entry.failed === true).length,
    expired: sent.filter((entry) => entry.expired === true).length,
    unresolved: sent.filter((entry) => entry.landedSlot === undefined && entry.expired !== true).length,
    slots: { p50: percentile(deltas, 50), p99: percentile(deltas, 99), max: deltas.at(-1) ?? null },
    slotHistogram,
    answerMsBySlots,
    answerMs: { p50: round(percentile(answers, 50)), p99: round(percentile(answers, 99)) },
    paths,
  };
}

/**
 * Runs the step: `quick` sends for 8 s and waits at most 10 s after, else 20 s and 20 s.
 * Every process it starts is stopped before it returns, failed or not.
 */
export async function measureLandingByRoute(quick: boolean, progress: (what: string, seconds: number) => void): Promise<LandingByRoute> {
  const sendSeconds = quick ? 8 : 20;
  const maxWaitSeconds = quick ? 10 : 20;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-landing-'));
  const servers: ServerProcess[] = [];
  const pools: Pool[] = [];
  const runs: RouteRun[] = [];
  try {
    progress('landing by route: starting the local cluster and a gateway per route', 0);
    const ledger = await startLedger(path.join(work, 'cluster'), SLOT_MS);
    servers.push(ledger);
    const nodePool = new Pool(ledger.url, { connections: 4, pipelining: 1 });
    pools.push(nodePool);
    const node = jsonRpc(nodePool);
    const gateways = await Promise.allSettled(ROUTE_NAMES.map((route) => startGateway(route, ledger.url, work)));
    for (const started of gateways) if (started.status === 'fulfilled') servers.push(started.value);
    for (const started of gateways) if (started.status === 'rejected') throw started.reason;
    ROUTE_NAMES.forEach((route, i) => runs.push(new RouteRun(route, (gateways[i] as PromiseFulfilledResult<ServerProcess>).value)));
    for (const run of runs) await run.fund(node);
    await Promise.all(runs.map((run) => untilReady(run, node)));
    const validators = (await node<unknown[]>('getClusterNodes')).length;

    progress(`landing by route: ${RATE_PER_ROUTE} transfers/s through each of RPC, Jito and TPU at once, ${SLOT_MS} ms slots`, sendSeconds);
    const cpu = cpuDuring(ledger.pid, Object.fromEntries(runs.map((run) => [run.route, run.gateway.pid])) as Record<RouteName, number>);
    await offerLoad(runs, node, sendSeconds, RATE_PER_ROUTE);
    const cpuUsed = cpu.end();
    progress('landing by route: waiting for every transaction to land or expire', maxWaitSeconds);
    const waitedSeconds = await followUntilSettled(
      runs.flatMap((run) => run.sent),
      node,
      maxWaitSeconds * 1000,
    );
    const routes: RouteLanding[] = [];
    for (const run of runs) routes.push(summarizeRoute(run, await pathsOf(run, node)));
    return { slotMs: SLOT_MS, validators, ratePerRoute: RATE_PER_ROUTE, sendSeconds, waitedSeconds, maxWaitSeconds, routes, cpu: cpuUsed };
  } finally {
    await Promise.allSettled(runs.map((run) => run.close()));
    await Promise.allSettled(pools.map((pool) => pool.close()));
    // Gateways first (they send to the cluster), the cluster last.
    await Promise.allSettled(servers.slice(1).map((server) => server.stop()));
    if (servers[0] !== undefined) await servers[0].stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The step's headline figures under their flat names in latest.json. */
export function landingStatistics(landing: LandingByRoute): LandingStatistics {
  const figures: Record<string, number | null> = {};
  for (const route of landing.routes) {
    figures[`landing_${route.route}_landed_pct`] = route.landedPct;
    figures[`landing_${route.route}_slots_p50`] = route.slots.p50;
    figures[`landing_${route.route}_slots_p99`] = route.slots.p99;
  }
  return figures as LandingStatistics;
}

if (require.main === module) {
  const quick = process.argv.includes('--quick');
  measureLandingByRoute(quick, (what, seconds) => process.stderr.write(`${what}${seconds > 0 ? ` (${seconds} s)` : ''}\n`))
    .then(async (landing) => {
      const { landingTable } = await import('./landing-table');
      process.stdout.write(landingTable(landing));
      const file = path.resolve(__dirname, '../../bench/results/landing.json');
      const machine = { cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version };
      fs.writeFileSync(
        file,
        `${JSON.stringify({ at: new Date().toISOString(), mode: quick ? 'quick' : 'default', machine, landing }, null, 2)}\n`,
      );
      process.stdout.write(`wrote ${file}\n`);
    })
    .catch((error: unknown) => {
      process.stderr.write(`landing by route failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    });
}
