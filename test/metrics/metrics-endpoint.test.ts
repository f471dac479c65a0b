/**
 * GET /metrics: what a gateway did shows up in Prometheus's format, and only the operator
 * may read it (this machine by default, or whoever has metricsToken).
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { startTestGateway } from '../helpers/gateway';
import { useGateway } from '../helpers/use-gateway';
import { rpc, submitBatch } from '../helpers/rpc';
import { fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import { until } from '../helpers/until';

/** The samples of a Prometheus text exposition, by series (`name{labels}`). */
async function scrape(url: string, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const response = await fetch(`${url}/metrics`, { headers });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe('GET /metrics', () => {
  const ctx = useGateway();

  it('counts submissions by operation and outcome, refusals by error kind, states, landing times, upstream sends and the event loop', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const before = await scrape(ctx.gw.url);

    const good = await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000);
    assert.equal(typeof (await rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [good, { encoding: 'base64' }])).body.result, 'string');
    const damaged = Buffer.from(await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 2_000_000), 'base64');
    damaged[5] = damaged[5]! ^ 0xff; // inside the signature
    assert.equal(
      (await rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [damaged.toString('base64'), { encoding: 'base64' }])).body.error.code,
      -32003,
    );
    const batch = await submitBatch(ctx.gw.url, ctx.gw.key, [
      await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 3_000_000),
      await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 4_000_000),
    ]);
    assert.equal(batch.body.code, 1);
    // Landed once confirmed: a tracking round or two after the send.
    const after = await until(
      async () => {
        await ctx.gw.app.tracker.runRound();
        return scrape(ctx.gw.url);
      },
      (now) =>
        (now.get('slipway_transaction_states_total{state="landed"}') ?? 0) -
          (before.get('slipway_transaction_states_total{state="landed"}') ?? 0) >=
        3,
    );

    const delta = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
    assert.equal(delta('slipway_submissions_total{operation="sendTransaction",outcome="accepted"}'), 1);
    assert.equal(delta('slipway_submissions_total{operation="submitBatch",outcome="accepted"}'), 1);
    assert.equal(delta('slipway_submissions_total{operation="sendTransaction",outcome="refused"}'), 1, 'refused at the edge counts too');
    assert.equal(delta('slipway_refusals_total{kind="SIGNATURE_VERIFICATION_FAILURE"}'), 1);
    assert.equal(delta('slipway_transaction_states_total{state="forwarded"}'), 3);
    assert.equal(delta('slipway_transaction_states_total{state="landed"}'), 3);
    assert.equal(delta('slipway_landing_seconds_count{kind="transaction",route="embedded"}'), 3);
    assert.ok(delta('slipway_landing_seconds_sum{kind="transaction",route="embedded"}') >= 0);
    assert.equal(delta('slipway_upstream_sends_total{upstream="embedded",operation="transaction",outcome="ok"}'), 3);
    assert.equal(delta('slipway_upstream_send_seconds_count{upstream="embedded",operation="transaction"}'), 3);
    assert.equal(delta(`slipway_key_transactions_total{key_id="${ctx.gw.app.initialKey!.id}"}`), 3);
    // The submission paths' request counts and durations (counted in plain numbers, metrics/hot-series.ts).
    assert.equal(delta('slipway_request_duration_seconds_count{path="/submit-batch"}'), 1);
    assert.equal(delta('slipway_request_duration_seconds_bucket{le="+Inf",path="/submit-batch"}'), 1);
    assert.ok(delta('slipway_request_duration_seconds_count{path="/"}') >= 2);
    // fetch's headers are outside lean HTTP's form: these come by node:http's fast path.
    assert.ok(delta('slipway_http_fast_path_requests_total') >= 3);
    for (const series of [
      'slipway_tracked_transactions',
      'slipway_rebroadcast_shed_total',
      'slipway_protected_held_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.ok(after.has(series), `${series} is exposed`);
    }
  });

  it('counts each submission exactly once, by what it came to: the same bytes sent three times at once are one accepted and two duplicates', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const tx = await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 5_000_000);
    const before = await scrape(ctx.gw.url);
    const answers = await Promise.all([1, 2, 3].map(() => rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [tx, { encoding: 'base64' }])));
    assert.ok(answers.every((answer) => answer.body.result === answers[0]!.body.result));
    await waitForStatus(ctx.connection, answers[0]!.body.result); // nothing of it is counted after this test
    const forbidden = await rpc(ctx.gw.url, ctx.gw.plainKey, 'sendBundle', [[tx], { encoding: 'base64' }]);
    assert.equal(forbidden.status, 403);
    const after = await scrape(ctx.gw.url);
    const delta = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
    assert.equal(delta('slipway_submissions_total{operation="sendTransaction",outcome="accepted"}'), 1);
    assert.equal(delta('slipway_submissions_total{operation="sendTransaction",outcome="duplicate"}'), 2);
    assert.equal(delta('slipway_submissions_total{operation="sendBundle",outcome="refused"}'), 1);
    assert.equal(delta('slipway_refusals_total{kind="FORBIDDEN"}'), 1);
  });

  it("needs no API key (it is the operator's, not a client's)", async () => {
    const response = await fetch(`${ctx.gw.url}/metrics`);
    assert.equal(response.status, 200);
  });
});

describe('who may read /metrics', () => {
  it('with metricsToken set: only whoever sends it as a bearer token', async () => {
    const gw = await startTestGateway({ metricsToken: 'operator-secret' });
    try {
      for (const headers of [
        {},
        { authorization: 'Bearer wrong' },
        { authorization: 'operator-secret' },
        { 'x-api-key': gw.key },
      ] as Record<string, string>[]) {
        const response = await fetch(`${gw.url}/metrics`, { headers });
        assert.equal(response.status, 401, JSON.stringify(headers));
        assert.deepEqual(await response.json(), {
          code: 401,
          message: 'send the metricsToken configured on the gateway as "Authorization: Bearer <token>"',
        });
      }
      await scrape(gw.url, { authorization: 'Bearer operator-secret' });
    } finally {
      await gw.close();
    }
  });

  const external = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
  it('without a token: clients on this machine only', { skip: external === undefined && 'no address but loopback here' }, async () => {
    const gw = await startTestGateway({ host: '0.0.0.0' });
    try {
      const { port } = new URL(gw.url);
      const response = await fetch(`http://${external}:${port}/metrics`);
      assert.equal(response.status, 403);
      assert.match(
        ((await response.json()) as { message: string }).message,
        /^this page is served to clients on the gateway's own machine only; set metricsToken/,
      );
      await scrape(`http://127.0.0.1:${port}`);
    } finally {
      await gw.close();
    }
  });

  it('without a token: a request a reverse proxy on this machine forwards (Forwarded, X-Forwarded-For, X-Real-IP) is refused on every operator page', async () => {
    const gw = await startTestGateway({});
    try {
      for (const path of ['/metrics', '/dashboard', '/dashboard/events']) {
        for (const name of ['forwarded', 'x-forwarded-for', 'x-real-ip']) {
          const header = { [name]: name === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9' };
          const response = await fetch(`${gw.url}${path}`, { headers: header });
          assert.equal(response.status, 403, `${path} ${JSON.stringify(header)}`);
          const { message } = (await response.json()) as { message: string };
          assert.match(
            message,
            new RegExp(`this request came through a proxy \\(it carries ${name}\\); set (metricsToken|dashboardToken)`),
          );
        }
      }
      await scrape(gw.url);
    } finally {
      await gw.close();
    }
    const withToken = await startTestGateway({ metricsToken: 'operator-secret' });
    try {
      await scrape(withToken.url, { authorization: 'Bearer operator-secret', 'x-forwarded-for': '203.0.113.9' });
    } finally {
      await withToken.close();
    }
  });
});
