/** The landing step's table, as `npm run bench` and `node dist/bench/landing-by-route.js` print it. */
import { fmt } from './format';
import type { LandingByRoute } from './landing-shapes';

const ROUTE_LABELS = { rpc: 'RPC fan-out', jito: 'Jito (block engine)', tpu: 'TPU (QUIC to leaders)' } as const;

/** The landing step's table: per route, what was sent, accepted and landed, and in how many slots. */
export function landingTable(landing: LandingByRoute): string {
  const lines: string[] = [];
  const slots = (n: number | null) => (n === null ? '–' : String(n)).padStart(5);
  const ms = (n: number | null) => (n === null ? '–' : fmt(n, 1)).padStart(8);
  lines.push(
    `Landing by route: ${landing.ratePerRoute} transfers/s through each route at once for ${landing.sendSeconds} s, ` +
      `local cluster (${landing.validators} validators, ${landing.slotMs} ms slots)`,
  );
  lines.push('                          sent  accepted  landed  landed %   slots to land p50  p99  max   answer ms p50     p99');
  for (const route of landing.routes) {
    lines.push(
      `  ${ROUTE_LABELS[route.route].padEnd(22)}${String(route.sent).padStart(6)}${String(route.accepted).padStart(10)}` +
        `${String(route.landed).padStart(8)}${fmt(route.landedPct, 1).padStart(10)}` +
        `${' '.repeat(16)}${slots(route.slots.p50)}${slots(route.slots.p99)}${slots(route.slots.max)}` +
        `${' '.repeat(9)}${ms(route.answerMs.p50)}${ms(route.answerMs.p99)}`,
    );
  }
  for (const route of landing.routes) {
    const histogram = Object.entries(route.slotHistogram)
      .map(([delta, count]) => `${delta}: ${count} (median answer ${fmt(route.answerMsBySlots[delta] ?? 0)} ms)`)
      .join(', ');
    const paths = Object.entries(route.paths)
      .map(([path, count]) => `${path} ${count}`)
      .join(', ');
    const notes = [`slots to land ${histogram === '' ? 'none landed' : histogram}`, `reached the cluster as ${paths === '' ? '–' : paths}`];
    if (route.failedOnChain > 0) notes.push(`${route.failedOnChain} failed on chain`);
    if (route.expired > 0) notes.push(`${route.expired} never landed (blockhash expired)`);
    if (route.unresolved > 0) notes.push(`${route.unresolved} not landed within the ${landing.maxWaitSeconds} s wait`);
    for (const [why, count] of Object.entries(route.refusals)) notes.push(`refused ${count}×: ${why}`);
    lines.push(`  ${ROUTE_LABELS[route.route]}: ${notes.join('; ')}`);
  }
  const { cpu } = landing;
  lines.push(
    `  CPU while sending, % of one core (of ${cpu.cores * 100}): cluster ${fmt(cpu.clusterPct)}, gateways ` +
      `${landing.routes.map((route) => `${route.route} ${fmt(cpu.gatewaysPct[route.route])}`).join(', ')}, this client ${fmt(cpu.benchPct)}; ` +
      `the whole machine ${fmt(cpu.machineBusyPct)} (other work included), stolen by the host ${fmt(cpu.machineStealPct)}`,
  );
  return lines.join('\n') + '\n';
}

/** Horizontal bars: throughput against the ceiling, and latency at the fixed rate. */
