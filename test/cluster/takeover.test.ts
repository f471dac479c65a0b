/**
 * Rebroadcast ownership across gateway processes sharing PostgreSQL: each unfinished
 * submission is rebroadcast by the gateway that holds its lease only; when that gateway is
 * killed (-9), another takes its submissions over within a few seconds and they land.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { createPostgresJournal } from '../../src/stores/journal';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { makeDataDir } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/process';
import { post } from '../helpers/rpc';
import { until } from '../helpers/until';

describe('rebroadcast ownership across gateway processes', () => {
  const { schema, drop } = testSchema();
  let cluster: Cluster;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];

  /** A gateway process whose single RPC upstream is cluster node `node`. */
  const gateway = async (node: number) => {
    const dir = makeDataDir();
    dirs.push(dir);
    const config = path.join(dir, 'slipway.config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[node]!.url] } },
        rebroadcast: { intervalMs: 200, maxAttempts: 1000, queueCapacity: 1000 },
      }),
    );
    const server = await startServer(dir, {
      SLIPWAY_CONFIG: config,
      SLIPWAY_POSTGRES_URL: POSTGRES_URL,
      SLIPWAY_POSTGRES_SCHEMA: schema,
      SLIPWAY_LOG_LEVEL: 'warn',
    });
    servers.push(server);
    return server;
  };

  before(async () => {
    cluster = await startCluster(2, 50);
  });
  after(async () => {
    for (const server of servers) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await cluster.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    await drop();
  });

  it('only the lease holder rebroadcasts; after it is killed, another gateway takes over and every submission lands', async (t) => {
    const a = await gateway(0);
    const b = await gateway(1);
    const key = a.initialKey!;
    assert.equal(b.initialKey, undefined, 'one initial key for the cluster');

    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    const txs = Array.from({ length: 20 }, (_, i) => ledgerTransfer(cluster.ledger, payer, 1_000_000 + i));

    // Node 0 answers but drops everything: what A forwards stays unfinished, and A rebroadcasts it.
    cluster.nodes[0]!.fault('drop');
    const signatures: string[] = [];
    for (const tx of txs) {
      const answer = await post(
        a.url,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] },
        { 'x-api-key': key },
      );
      assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
      signatures.push(answer.body.result);
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const sendsTo = (node: number) => cluster.nodes[node]!.calls.filter((c) => c.method === 'sendTransaction').length;
    assert.ok(sendsTo(0) > txs.length, 'A rebroadcasts');
    assert.equal(sendsTo(1), 0, 'B does not: A holds the leases');
    assert.ok(
      signatures.every((s) => cluster.ledger.getSignatureStatus(s) === undefined),
      'nothing landed yet',
    );

    a.child.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    cluster.nodes[0]!.fault('none');
    await until(
      () => signatures.filter((s) => cluster.ledger.getSignatureStatus(s) !== undefined).length,
      (n) => n === signatures.length,
      15_000,
    );
    const tookOverMs = Date.now() - killedAt;
    assert.ok(sendsTo(1) >= txs.length, 'B sent them');
    assert.ok(tookOverMs < 8_000, `taken over and landed ${tookOverMs} ms after the kill`);
    t.diagnostic(`taken over and landed ${tookOverMs} ms after kill -9 (leases last 3 s, renewed every 1 s)`);

    // The shared journal says landed for every one: zero lost.
    const journal = await createPostgresJournal(POSTGRES_URL, schema, `test_${crypto.randomBytes(3).toString('hex')}`);
    try {
      const states = await until(
        async () => Promise.all(signatures.map(async (s) => (await journal.find(s))[0]!.transactions[0]!.state)),
        (list) => list.every((state) => state === 'landed'),
        10_000,
      );
      assert.equal(states.length, 20);
    } finally {
      await journal.close();
    }
  });
});
