import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { register } from 'prom-client';
import { JsonRpcClient } from '../../src/upstreams/json-rpc-client';
import { startCluster, type Cluster } from '../helpers/cluster';

let cluster: Cluster;
before(async () => {
  cluster = await startCluster(2);
});
after(() => cluster.close());

/** slipway_upstream_circuit_open for one endpoint of this test's client. */
const circuitOpen = async (url: string) =>
  (await register.getSingleMetric('slipway_upstream_circuit_open')!.get()).values.find(
    (v) => v.labels.upstream === 'breaker-test' && v.labels.endpoint === url,
  )?.value;

const slotCalls = (node: number) => cluster.nodes[node]!.calls.filter((c) => c.method === 'getSlot').length;

describe('JSON-RPC client over several endpoints', () => {
  it('fails over, opens the circuit after 3 failures, and sends to the endpoint again after the cooldown', async () => {
    const client = new JsonRpcClient({
      name: 'breaker-test',
      urls: cluster.nodes.map((n) => n.url),
      timeoutMs: 200,
      maxAnswerBytes: 1_000_000,
      breakerCooldownMs: 300,
    });
    try {
      cluster.nodes[0]!.fault('error');
      assert.equal(
        typeof ((await client.call('getSlot', [])) as { result: number }).result,
        'number',
        'fails over to the healthy endpoint',
      );
      for (let i = 0; i < 3; i++) await client.callAll('getSlot', []); // three failures in a row on the first
      const callsWhileOpen = slotCalls(0);
      assert.equal(await circuitOpen(cluster.nodes[0]!.url), 1, 'the metric shows the circuit open');
      assert.equal(await circuitOpen(cluster.nodes[1]!.url), 0);
      cluster.nodes[0]!.fault('none');
      for (let i = 0; i < 3; i++) await client.callAll('getSlot', []);
      assert.equal(slotCalls(0), callsWhileOpen, 'an open circuit keeps the endpoint out of rotation, sends included');
      await new Promise((resolve) => setTimeout(resolve, 350));
      const settled = await client.callAll('getSlot', []);
      assert.equal(slotCalls(0), callsWhileOpen + 1, 'after the cooldown it is tried again');
      assert.ok(
        settled.every((r) => r.status === 'fulfilled'),
        'and it recovers',
      );
      assert.equal(await circuitOpen(cluster.nodes[0]!.url), 0, 'the metric shows it closed again');
    } finally {
      await client.close();
    }
  });

  it('bounds every call by the timeout and names what went wrong on each endpoint', async () => {
    const client = new JsonRpcClient({
      name: 'breaker-test',
      urls: cluster.nodes.map((n) => n.url),
      timeoutMs: 150,
      maxAnswerBytes: 1_000_000,
    });
    try {
      cluster.nodes[0]!.fault('hang');
      cluster.nodes[1]!.fault('refuse');
      const started = Date.now();
      await assert.rejects(
        client.call('getSlot', []),
        /^Error: every endpoint failed: http:\/\/127\.0\.0\.1:\d+: no answer within 150 ms; http:\/\/127\.0\.0\.1:\d+: connection reset$/,
      );
      assert.ok(Date.now() - started < 1000);
      const settled = await client.callAll('getSlot', []);
      assert.equal(settled.filter((r) => r.status === 'rejected').length, 2);
    } finally {
      cluster.nodes[0]!.fault('none');
      cluster.nodes[1]!.fault('none');
      await client.close();
    }
  });

  it('treats a JSON-RPC error as an answer, not a fault', async () => {
    const client = new JsonRpcClient({ name: 'breaker-test', urls: [cluster.nodes[0]!.url], timeoutMs: 500, maxAnswerBytes: 1_000_000 });
    try {
      const answer = await client.call('noSuchMethod', []);
      assert.deepEqual(answer, { error: { code: -32601, message: 'Method not found: noSuchMethod' } });
    } finally {
      await client.close();
    }
  });
});
