/**
 * `bin/slipway status` against a running gateway, and the Prometheus text reader it uses,
 * cross-checked against prom-client's own view of the same registry.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import client from 'prom-client';
import { histogramQuantile, parsePrometheusText } from '../../src/metrics/prometheus-text';
import { makeDataDir } from '../helpers/gateway';
import { runCli, startServer } from '../helpers/process';
import { rpc } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('bin/slipway status', () => {
  it('sums up a running gateway: health, submissions, states, landing time, upstreams, refusals', async () => {
    const dir = makeDataDir();
    dirs.push(dir);
    const server = await startServer(dir, { SLIPWAY_LOG_LEVEL: 'warn' });
    try {
      const key = server.initialKey!;
      const c = connect(server.url, key);
      const alice = await fundedKeypair(c);
      const tx = await transferTx(c, alice, Keypair.generate().publicKey, 1_000_000);
      assert.equal(typeof (await rpc(server.url, key, 'sendTransaction', [tx, { encoding: 'base64' }])).body.result, 'string');
      assert.equal((await rpc(server.url, key, 'sendTransaction', ['AAAA', { encoding: 'base64' }])).body.error.code, -32602);

      const status = async () => {
        const run = await runCli(['status', '--url', server.url, '--json']);
        assert.equal(run.code, 0, run.stderr);
        return JSON.parse(run.stdout);
      };
      const json = await until(status, (s) => s.states.landed >= 1, 10_000);
      assert.equal(json.health.ok, true);
      assert.equal(typeof json.health.slot, 'number');
      assert.deepEqual(json.submissions.sendTransaction, { accepted: 1, duplicate: 0, replayed: 0, refused: 1, rejected: 0 });
      assert.equal(json.states.forwarded, 1);
      assert.equal(json.landing.count, 1);
      assert.ok(json.landing.p50 >= 0);
      assert.deepEqual(json.refusals, { INVALID_PARAMS: 1 });
      const embedded = json.upstreams.find((u: { name: string }) => u.name === 'embedded');
      assert.deepEqual([embedded.ok, embedded.errors, embedded.openCircuits], [1, 0, []]);

      const text = await runCli(['status', '--url', server.url]);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /^Slipway at http:\/\/127\.0\.0\.1:\d+: healthy, slot \d+\n/);
      assert.match(text.stdout, /\n {2}sendTransaction +1 +0 +0 +1 +0\n/);
      assert.match(text.stdout, /\nLanding time: p50 \d+ ms, p99 \d+ ms \(1 landed\)\n/);
      assert.match(text.stdout, /\n {2}embedded +sends 1 ok, 0 failed;/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('says what to do when no gateway answers', async () => {
    const run = await runCli(['status', '--url', 'http://127.0.0.1:9']);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^status: cannot read http:\/\/127\.0\.0\.1:9: .*\n\(is the gateway running\? give its address with --url, and --token if it has a metricsToken\)\n$/,
    );
  });
});

describe('the Prometheus text reader', () => {
  it('reads back every sample of a registry as prom-client reports them, histograms with their labels, sums and counts', async () => {
    const registry = new client.Registry();
    const counter = new client.Counter({ name: 't_total', help: 'h', labelNames: ['kind', 'note'], registers: [registry] });
    const histogram = new client.Histogram({
      name: 't_seconds',
      help: 'h',
      labelNames: ['kind'],
      buckets: [0.1, 1, 10],
      registers: [registry],
    });
    counter.inc({ kind: 'a', note: 'quote " backslash \\ newline \n end' }, 3);
    counter.inc({ kind: 'b', note: '' }, 0.5);
    for (const v of [0.05, 0.5, 0.5, 5]) histogram.observe({ kind: 'x' }, v);
    histogram.observe({ kind: 'y' }, 20);
    const samples = parsePrometheusText(await registry.metrics());
    const expected = (await registry.getMetricsAsJSON()).flatMap((metric) =>
      metric.values.map((v) => ({
        name: (v as { metricName?: string }).metricName ?? metric.name,
        labels: Object.fromEntries(Object.entries(v.labels).map(([k, l]) => [k, String(l)])),
        value: v.value,
      })),
    );
    const key = (s: { name: string; labels: Record<string, string> }) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`;
    assert.deepEqual(new Map(samples.map((s) => [key(s), s.value])), new Map(expected.map((s) => [key(s), s.value])));
  });

  it('interpolates quantiles within buckets, as Prometheus does', () => {
    const buckets = [
      { le: 0.1, count: 1 },
      { le: 1, count: 3 },
      { le: 10, count: 4 },
      { le: Infinity, count: 4 },
    ];
    assert.equal(histogramQuantile(0.5, buckets), 0.55); // rank 2: halfway through (0.1, 1]
    assert.equal(histogramQuantile(0.25, buckets), 0.1);
    assert.equal(histogramQuantile(1, buckets), 10);
    assert.equal(histogramQuantile(0.5, [{ le: Infinity, count: 0 }]), undefined);
  });
});
