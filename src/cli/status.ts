/**
 * `slipway status`: the figures of a running gateway's /metrics and /health, summed up for
 * someone at a terminal on the server (where /metrics is served without a token).
 */
import { resolveConfig } from '../config/config';
import { histogramQuantile, parsePrometheusText, type Sample } from '../metrics/prometheus-text';
import { parseOptions } from './parse-options';
import { OUTCOMES } from '../metrics/metrics';

export async function runStatus(args: string[]): Promise<number> {
  const { values } = parseOptions('status', args, {
    url: { type: 'string' },
    token: { type: 'string' },
    json: { type: 'boolean' },
    'data-dir': { type: 'string' },
    config: { type: 'string' },
  });
  const config = resolveConfig({ dataDir: values['data-dir'], config: values.config });
  const host =
    config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = (values.url ?? `http://${host}:${config.port}`).replace(/\/$/, '');
  const token = values.token ?? (config.metricsToken === '' ? undefined : config.metricsToken);
  let metricsText: string;
  let health: { status: number; body: { status?: string; slot?: number; message?: string } };
  try {
    const [metrics, healthResponse] = await Promise.all([
      fetch(`${url}/metrics`, {
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(5_000),
      }),
      fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) }),
    ]);
    metricsText = await metrics.text();
    if (metrics.status !== 200) throw new Error(`/metrics answered ${metrics.status}: ${metricsText}`);
    health = { status: healthResponse.status, body: (await healthResponse.json()) as typeof health.body };
  } catch (error) {
    process.stderr.write(
      `status: cannot read ${url}: ${error instanceof Error ? error.message : String(error)}\n(is the gateway running? give its address with --url, and --token if it has a metricsToken)\n`,
    );
    return 1;
  }
  const summary = summarize(parsePrometheusText(metricsText), health);
  process.stdout.write(values.json ? `${JSON.stringify({ url, ...summary }, null, 2)}\n` : render(url, summary));
  return health.status === 200 ? 0 : 1;
}

type Summary = ReturnType<typeof summarize>;

function summarize(samples: Sample[], health: { status: number; body: { status?: string; slot?: number; message?: string } }) {
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  const labelValues = (name: string, label: string) =>
    [...new Set(samples.filter((s) => s.name === name).map((s) => s.labels[label]!))].filter((v) => v !== undefined);
  const quantiles = (name: string, labels: Record<string, string>) => {
    // Summed per bound over the series that match (every route, say).
    const byBound = new Map<number, number>();
    for (const s of samples) {
      if (s.name !== `${name}_bucket` || !Object.entries(labels).every(([k, v]) => s.labels[k] === v)) continue;
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      byBound.set(le, (byBound.get(le) ?? 0) + s.value);
    }
    const buckets = [...byBound].map(([le, count]) => ({ le, count }));
    return { count: value(`${name}_count`, labels), p50: histogramQuantile(0.5, buckets), p99: histogramQuantile(0.99, buckets) };
  };
  return {
    health:
      health.status === 200
        ? { ok: true, slot: health.body.slot ?? null }
        : { ok: false, reason: health.body.message ?? health.body.status ?? `HTTP ${health.status}` },
    submissions: Object.fromEntries(
      ['sendTransaction', 'submitBatch', 'sendBundle'].map((operation) => [
        operation,
        Object.fromEntries(OUTCOMES.map((outcome) => [outcome, value('slipway_submissions_total', { operation, outcome })])),
      ]),
    ),
    states: Object.fromEntries(
      labelValues('slipway_transaction_states_total', 'state').map((state) => [
        state,
        value('slipway_transaction_states_total', { state }),
      ]),
    ),
    followed: value('slipway_tracked_transactions'),
    landing: quantiles('slipway_landing_seconds', { kind: 'transaction' }),
    refusals: Object.fromEntries(
      labelValues('slipway_refusals_total', 'kind')
        .map((kind) => [kind, value('slipway_refusals_total', { kind })])
        .filter(([, n]) => (n as number) > 0),
    ),
    upstreams: labelValues('slipway_upstream_sends_total', 'upstream').map((upstream) => ({
      name: upstream,
      ok: value('slipway_upstream_sends_total', { upstream, outcome: 'ok' }),
      errors: value('slipway_upstream_sends_total', { upstream, outcome: 'error' }),
      latency: quantiles('slipway_upstream_send_seconds', { upstream, operation: 'transaction' }),
      openCircuits: samples
        .filter((s) => s.name === 'slipway_upstream_circuit_open' && s.labels.upstream === upstream && s.value === 1)
        .map((s) => s.labels.endpoint!),
    })),
    antiMev: {
      held: value('slipway_protected_held_total'),
      released: value('slipway_protected_released_total'),
      expiredWhileHeld: value('slipway_protected_expired_while_held_total'),
    },
    rateLimited: Object.fromEntries(
      labelValues('slipway_rate_limited_total', 'key_id').map((key) => [key, value('slipway_rate_limited_total', { key_id: key })]),
    ),
    shed: Object.fromEntries(
      labelValues('slipway_shed_requests_total', 'reason').map((reason) => [reason, value('slipway_shed_requests_total', { reason })]),
    ),
    eventLoopLagMs: { now: value('nodejs_eventloop_lag_seconds') * 1000, p99: value('nodejs_eventloop_lag_p99_seconds') * 1000 },
    rssMiB: value('process_resident_memory_bytes') / 2 ** 20,
  };
}

const seconds = (s: number | undefined) => (s === undefined ? '—' : s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(1)} s`);
const pairs = (record: Record<string, number>) => {
  const entries = Object.entries(record);
  return entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k} ${v}`).join(', ');
};

function render(url: string, s: Summary): string {
  const lines = [
    `Slipway at ${url}: ${s.health.ok ? `healthy, slot ${s.health.slot}` : `NOT HEALTHY: ${s.health.reason}`}`,
    '',
    `${'Submissions since start'.padEnd(28)}${OUTCOMES.map((o) => ` ${o.padStart(9)}`).join('')}`,
    ...Object.entries(s.submissions).map(
      ([operation, counts]) =>
        `  ${operation.padEnd(26)} ${Object.values(counts)
          .map((n) => String(n).padStart(9))
          .join(' ')}`,
    ),
    '',
    `Transactions: ${pairs(s.states)}; followed until they land: ${s.followed}`,
    `Landing time: ${s.landing.count === 0 ? 'nothing landed yet' : `p50 ${seconds(s.landing.p50)}, p99 ${seconds(s.landing.p99)} (${s.landing.count} landed)`}`,
    `Refusals by kind: ${pairs(s.refusals)}`,
    '',
    'Upstreams',
    ...s.upstreams.map(
      (u) =>
        `  ${u.name.padEnd(20)} sends ${u.ok} ok, ${u.errors} failed; send time p50 ${seconds(u.latency.p50)}, p99 ${seconds(u.latency.p99)}` +
        (u.openCircuits.length > 0 ? `; OUT OF ROTATION: ${u.openCircuits.join(', ')}` : ''),
    ),
    '',
    `Anti-MEV: held ${s.antiMev.held}, released ${s.antiMev.released}, expired while held ${s.antiMev.expiredWhileHeld}`,
    `Rate-limited requests by key: ${pairs(s.rateLimited)}`,
    `Shed on arrival: ${pairs(s.shed)}`,
    `Event loop lag: ${s.eventLoopLagMs.now.toFixed(1)} ms (p99 ${s.eventLoopLagMs.p99.toFixed(1)} ms); resident memory ${s.rssMiB.toFixed(0)} MiB`,
  ];
  return `${lines.join('\n')}\n`;
}
