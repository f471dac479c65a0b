/**
 * `GET /health` is open to anyone and never shed: a flood of it must not become a flood on
 * the operator's RPC node. The gateway probes the reads upstream at most once a second and
 * every health check in between shares that answer.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

let cluster: Cluster;
let gw: TestGateway;
before(async () => {
  cluster = await startCluster(1);
  gw = await startTestGateway({}, { upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } } });
});
after(async () => {
  await gw.close();
  await cluster.close();
});

const getSlots = () => cluster.nodes[0]!.calls.filter((call) => call.method === 'getSlot').length;

test('2,000 health checks cost the upstream about one getSlot a second, and each is answered with the slot', async () => {
  // What the gateway asks by itself over the same time, for comparison.
  const idleStart = getSlots();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const idlePerSecond = getSlots() - idleStart;

  const before = getSlots();
  const started = Date.now();
  let served = 0;
  const worker = async () => {
    while (served < 2_000) {
      served++;
      const answer = await fetch(`${gw.url}/health`);
      assert.equal(answer.status, 200);
      assert.equal(typeof ((await answer.json()) as { slot: number }).slot, 'number');
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const seconds = (Date.now() - started) / 1000;
  const made = getSlots() - before;
  const allowed = Math.ceil(seconds) + 1 + idlePerSecond * Math.ceil(seconds);
  assert.ok(made <= allowed, `${made} getSlot calls for 2,000 health checks in ${seconds.toFixed(1)} s (at most ${allowed}: one a second, plus ${idlePerSecond}/s the gateway asks by itself)`);
});
