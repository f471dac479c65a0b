/**
 * `GET /health` is open to anyone and never shed: a flood of it must not become a flood on
 * the operator's RPC node. The gateway probes the reads upstream at most once a second and
 * every health check in between shares that answer. Reads are forwarded within the key's
 * reads per second, and no further.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startCluster, type Cluster } from '../helpers/cluster';
import { Keypair } from '@solana/web3.js';
import { dataPaths } from '../../src/config/config';
import { createSqliteKeyStore } from '../../src/stores/key-store-sqlite';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { post } from '../helpers/rpc';

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

test('2,000 health checks cost the upstream about one getSlot a second, and each is answered with the slot', async (t) => {
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
  t.diagnostic(
    `/health flood: 2,000 checks in ${seconds.toFixed(1)} s, ${made} upstream getSlot calls (${((made / 2_000) * 1_000).toFixed(1)} per 1,000; the gateway's own: ${idlePerSecond}/s)`,
  );
  assert.ok(
    made <= allowed,
    `${made} getSlot calls for 2,000 health checks in ${seconds.toFixed(1)} s (at most ${allowed}: one a second, plus ${idlePerSecond}/s the gateway asks by itself)`,
  );
});

test('a flood of 2,000 reads (single and in JSON-RPC batches) from a key limited to 100 reads a second reaches the upstream within that rate', async (t) => {
  const store = createSqliteKeyStore(dataPaths(gw.dataDir).keys);
  const { key } = await store.create({ name: 'reader', bundle: false, readsPerSecond: 100 });
  await store.close();
  await waitForKey(gw.url, key, 3_000);
  const account = Keypair.generate().publicKey.toBase58();
  const upstreamReads = () => cluster.nodes[0]!.calls.filter((call) => call.method === 'getBalance').length;
  const before = upstreamReads();
  const started = Date.now();
  const classes = new Map<string, number>();
  const count = (entry: { result?: unknown; error?: { code: number } }) => {
    const name = entry.error === undefined ? 'result' : String(entry.error.code);
    classes.set(name, (classes.get(name) ?? 0) + 1);
  };
  let sent = 0;
  const worker = async () => {
    while (sent < 2_000) {
      // Every fourth request a batch of 20 reads, the others one.
      const size = sent % 80 === 0 ? 20 : 1;
      sent += size;
      const entries = Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getBalance', params: [account] }));
      const answer = await post(gw.url, size === 1 ? entries[0] : entries, { 'x-api-key': key });
      for (const entry of size === 1 ? [answer.body] : answer.body) count(entry);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const seconds = (Date.now() - started) / 1000;
  const made = upstreamReads() - before;
  const allowed = 100 + Math.ceil(100 * seconds);
  t.diagnostic(
    `reads flood: ${sent} reads in ${seconds.toFixed(1)} s from a key at 100/s: ${made} upstream getBalance calls (${((made / sent) * 1_000).toFixed(0)} per 1,000; allowed ${allowed}); answers ${JSON.stringify(Object.fromEntries(classes))}`,
  );
  assert.ok(made <= allowed, `${made} upstream reads, at most ${allowed}`);
  assert.equal(made, classes.get('result'), 'every read answered with a result went upstream once, and no refused one did');
  assert.deepEqual([...classes.keys()].sort(), ['-32097', 'result']);
});
