/**
 * A gateway on the shared stores (PostgreSQL journal and keys, Redis limits and duplicates)
 * in front of a local cluster: what it answers is journaled in PostgreSQL, followed there
 * to its final state, and readable with `bin/slipway submissions` from any machine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { runCli } from '../helpers/process';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { post, submitBatch } from '../helpers/rpc';
import { until } from '../helpers/until';

describe('a gateway on PostgreSQL and Redis', () => {
  const { schema, drop } = testSchema();
  const { prefix, clean } = testRedisPrefix();
  let cluster: Cluster;
  let gw: TestGateway;
  const env = { SLIPWAY_POSTGRES_URL: POSTGRES_URL, SLIPWAY_POSTGRES_SCHEMA: schema };

  before(async () => {
    cluster = await startCluster(1, 50);
    gw = await startTestGateway(
      { postgresUrl: POSTGRES_URL, postgresSchema: schema, redisUrl: REDIS_URL, redisKeyPrefix: prefix },
      {
        upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } },
        rebroadcast: { intervalMs: 100, maxAttempts: 100, queueCapacity: 1000 },
      },
    );
  });
  after(async () => {
    await gw.close();
    await cluster.close();
    await drop();
    await clean();
  });

  const transfer = (from: Keypair, lamports: number) => ledgerTransfer(cluster.ledger, from, lamports);

  it('journals in PostgreSQL and follows each transaction there to its final state, readable by the CLI', async () => {
    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    const single = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [transfer(payer, 1_000_000), { encoding: 'base64' }] },
      { 'x-api-key': gw.key },
    );
    const signature = single.body.result as string;
    assert.equal(typeof signature, 'string', JSON.stringify(single.body));
    const batch = await submitBatch(gw.url, gw.key, [transfer(payer, 2_000_000), transfer(payer, 3_000_000)]);
    assert.equal(batch.body.code, 1);

    for (const sig of [signature, ...batch.body.signatures]) {
      const entry = await until(
        async () => (await gw.app.journal.find(sig))[0],
        (e) => e?.transactions.find((t) => t.signature === sig)?.state === 'landed',
      );
      assert.equal(typeof entry!.transactions.find((t) => t.signature === sig)!.slot, 'number');
    }
    const shown = await runCli(['submissions', 'show', signature], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`${signature}  landed slot \\d+`));
    const listed = JSON.parse((await runCli(['submissions', 'list', '--json', '--limit', '5'], env)).stdout);
    assert.equal(listed.length, 2);
    assert.deepEqual(
      listed.map((e: { kind: string }) => e.kind),
      ['batch', 'transaction'],
    );
  });
});
