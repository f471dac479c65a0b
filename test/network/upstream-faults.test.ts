/**
 * Upstream faults on real sockets: an RPC node (and block-engine region) that answers garbage, half an answer, a 200
 * with a JSON-RPC error inside, a body that never finishes, or resets the connection. With a
 * healthy node beside it every submission lands; with none, the client is told each node's
 * fault in words; and once the gateway is closed it holds no socket or timer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, Transaction, type Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import type { FaultMode } from '../../src/ledger/fault-injector';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc, submitBatch } from '../helpers/rpc';
import { balanceOf, connect, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';

const TIMEOUT_MS = 300;
/** Each fault, and how the gateway names it to the client when no node is left. */
const FAULTS: [FaultMode, RegExp][] = [
  ['garbage', /the answer is not a JSON-RPC response \(HTTP 200, 24 bytes: "\?\?not json at all <html>"\)/],
  ['half', /the answer was cut off after its headers \(HTTP 200\): connection reset/],
  ['unhealthy', /the node cannot serve now: Node is unhealthy \(-32005\)/],
  ['slow', /the answer was cut off after its headers \(HTTP 200\): no answer within 300 ms/],
  ['refuse', /connection reset/],
  ['error', /HTTP 503/],
  ['hang', /no answer within 300 ms/],
];

/** Handles that keep the process alive, by kind (sockets, servers, timers). */
const handles = () => {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return Object.fromEntries([...counts].sort());
};

let cluster: Cluster;
let gw: TestGateway;
let connection: Connection;
let before_: Record<string, number>;

before(async () => {
  cluster = await startCluster(2);
  await new Promise((resolve) => setTimeout(resolve, 100));
  before_ = handles();
  gw = await startTestGateway(
    { logLevel: 'error' },
    {
      upstreams: {
        rpc: { type: 'rpc', urls: cluster.nodes.map((n) => n.url) },
        jito: { type: 'jito', urls: cluster.nodes.map((n) => `${n.url}/api/v1`) },
      },
      requestTimeoutMs: TIMEOUT_MS,
      rebroadcast: { intervalMs: 100, maxAttempts: 1000, queueCapacity: 1000 },
    },
  );
  connection = connect(gw.url, gw.key);
});
after(() => cluster.close());

const signatureOf = (tx: string) => bs58.encode(Transaction.from(Buffer.from(tx, 'base64')).signature!);

describe('an RPC node that misbehaves', () => {
  for (const [mode, named] of FAULTS) {
    it(`${mode}: the other node takes every submission and it lands; with both at fault the client is told why`, async () => {
      const alice = await fundedKeypair(connection);
      const bob = Keypair.generate();
      cluster.nodes[0]!.fault(mode);
      try {
        const single = await rpc(gw.url, gw.key, 'sendTransaction', [
          await transferTx(connection, alice, bob.publicKey, 1_000_000),
          { encoding: 'base64' },
        ]);
        assert.equal(typeof single.body.result, 'string', `preflight and send failed over: ${JSON.stringify(single.body)}`);
        const batch = await submitBatch(gw.url, gw.key, [
          await transferTx(connection, alice, bob.publicKey, 2_000_000),
          await transferTx(connection, alice, bob.publicKey, 3_000_000),
        ]);
        assert.equal(batch.body.code, 1, JSON.stringify(batch.body));
        await until(
          () => balanceOf(connection, bob.publicKey),
          (lamports) => lamports === 6_000_000,
        );
        const bundle = await rpc(gw.url, gw.key, 'sendBundle', [
          [ledgerTransfer(cluster.ledger, alice, 1_000_000, 1_000_000)],
          { encoding: 'base64' },
        ]);
        assert.equal(typeof bundle.body.result, 'string', `the other block-engine region took the bundle: ${JSON.stringify(bundle.body)}`);

        const tx = await transferTx(connection, alice, bob.publicKey, 4_000_000);
        cluster.nodes[1]!.fault(mode);
        const read = await rpc(gw.url, gw.key, 'getLatestBlockhash', []);
        assert.equal(read.body.error.code, -32091, 'a read no node can answer');
        assert.match(read.body.error.message, /^getLatestBlockhash could not be answered: every endpoint failed: /);
        const health = await fetch(`${gw.url}/health`);
        assert.equal(health.status, 503);
        assert.match(((await health.json()) as { message: string }).message, /^the reads upstream cannot be reached: /);
        const refused = await rpc(gw.url, gw.key, 'sendTransaction', [tx, { encoding: 'base64', skipPreflight: true }]);
        assert.equal(refused.body.error.code, -32091);
        assert.match(refused.body.error.message, /^no upstream took the transaction: rpc: no RPC node took the transaction: /);
        for (const node of cluster.nodes) assert.ok(refused.body.error.message.includes(node.url), `names ${node.url}`);
        assert.match(refused.body.error.message, named);
        const journaled = (await gw.app.journal.find(signatureOf(tx)))[0]!.transactions[0]!;
        assert.equal(journaled.state, 'rejected', 'what no node took is journaled with its final state');
        const noEngine = await rpc(gw.url, gw.key, 'sendBundle', [
          [ledgerTransfer(cluster.ledger, alice, 1_000_000, 1_000_000)],
          { encoding: 'base64' },
        ]);
        assert.equal(noEngine.body.error.code, -32091);
        assert.match(noEngine.body.error.message, /^no upstream took the bundle: jito: no block engine took the bundle: /);
        const preflight = await rpc(gw.url, gw.key, 'sendTransaction', [tx, { encoding: 'base64' }]);
        assert.equal(preflight.body.error.code, -32091);
        assert.match(preflight.body.error.message, /^the preflight simulation could not run: rpc: every endpoint failed: /);
      } finally {
        for (const node of cluster.nodes) node.fault('none');
      }
    });
  }
});

describe('after the faults', () => {
  it('every submission answered with success is journaled as landed', async (t) => {
    const entries = await gw.app.journal.since(0);
    const accepted = entries.flatMap((entry) => entry.transactions).filter((tx) => tx.state !== 'rejected');
    assert.ok(accepted.length >= FAULTS.length * 4, `${accepted.length} accepted`);
    await until(
      async () => (await gw.app.journal.since(0)).flatMap((e) => e.transactions).filter((tx) => tx.state === 'forwarded').length,
      (n) => n === 0,
      5_000,
    );
    const final = (await gw.app.journal.since(0)).flatMap((e) => e.transactions).map((tx) => tx.state);
    assert.deepEqual([...new Set(final)].sort(), ['landed', 'rejected']);
    t.diagnostic(
      `faults: ${accepted.length} answered with success, ${final.filter((s) => s === 'landed').length} landed; ${final.filter((s) => s === 'rejected').length} refused and journaled rejected`,
    );
  });

  it('the closed gateway holds no socket and no timer', async () => {
    await gw.close();
    // The nodes close their side of the gateway's connections a moment later.
    await until(
      async () => handles(),
      (now) => JSON.stringify(now) === JSON.stringify(before_),
      3_000,
    );
  });
});
