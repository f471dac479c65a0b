/**
 * The landing report of a cluster: two gateways share one PostgreSQL schema (journal, keys,
 * refusal counts), one key sends through both, and the report — asked of either gateway, or
 * of `bin/slipway report` pointed at PostgreSQL — counts what went through each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { runCli } from '../helpers/process';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { rpc } from '../helpers/rpc';
import { until } from '../helpers/until';

interface Report {
  keyId: string | null;
  transactions: Record<string, number>;
  landedPercent: number | null;
  timeToLand: {
    ms: { samples: number; p50: number | null; p99: number | null };
    slots: { samples: number; p50: number | null; p99: number | null };
  };
  refused: { transactions: number; byReason: Record<string, number> };
  byRoute: Record<string, { transactions: Record<string, number> }>;
}

describe('the landing report of two gateways sharing PostgreSQL', () => {
  const { schema, drop } = testSchema();
  const { prefix, clean } = testRedisPrefix();
  let cluster: Cluster;
  let gateways: TestGateway[] = [];
  const env = { SLIPWAY_POSTGRES_URL: POSTGRES_URL, SLIPWAY_POSTGRES_SCHEMA: schema };

  before(async () => {
    cluster = await startCluster(1, 50);
    const start = () =>
      startTestGateway(
        { postgresUrl: POSTGRES_URL, postgresSchema: schema, redisUrl: REDIS_URL, redisKeyPrefix: prefix },
        {
          upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } },
          rebroadcast: { intervalMs: 100, maxAttempts: 100, queueCapacity: 1000 },
        },
      );
    gateways = [await start(), await start()];
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    await cluster?.close();
    await drop();
    await clean();
  });

  it("counts one key's submissions and refusals through both gateways, asked of either, and by the CLI", async () => {
    const [a, b] = gateways as [TestGateway, TestGateway];
    const key = a.key;
    await waitForKey(b.url, key);
    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    const send = (gw: TestGateway, tx: string) => rpc(gw.url, key, 'sendTransaction', [tx, { encoding: 'base64' }]);
    const sent = { a: 2, b: 3 };
    for (const [gw, count] of [
      [a, sent.a],
      [b, sent.b],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const answer = await send(gw, ledgerTransfer(cluster.ledger, payer, 1_000_000 + i));
        assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
      }
      const forged = Buffer.from(ledgerTransfer(cluster.ledger, payer, 7_000_000), 'base64');
      forged[70]! ^= 1;
      assert.equal((await send(gw, forged.toString('base64'))).body.error.code, -32003);
    }

    const submitted = sent.a + sent.b;
    const reportOf = async (gw: TestGateway) => (await rpc(gw.url, key, 'getLandingReport', [{ since: '1h' }])).body.result as Report;
    const settled = (r: Report) => r.transactions.landed === submitted && r.refused.transactions === 2;
    const fromA = await until(() => reportOf(a), settled, 15_000);
    const fromB = await until(() => reportOf(b), settled, 15_000);
    for (const report of [fromA, fromB]) {
      assert.deepEqual(report.transactions, { submitted, landed: submitted, failedOnChain: 0, expired: 0, rejected: 0, pending: 0 });
      assert.equal(report.landedPercent, 100);
      assert.deepEqual(report.refused, { transactions: 2, byReason: { invalid_request: 2 } });
      assert.deepEqual(Object.keys(report.byRoute), ['rpc']);
      assert.equal(report.timeToLand.ms.samples, submitted);
      assert.ok(report.timeToLand.ms.p50! >= 0 && report.timeToLand.ms.p50! <= report.timeToLand.ms.p99!);
      // Receipt slots come from the slot watch; any known one is at or before the landing.
      assert.ok(report.timeToLand.slots.samples <= submitted);
      if (report.timeToLand.slots.samples > 0) assert.ok(report.timeToLand.slots.p50! >= 0);
    }

    const cli = await runCli(['report', '--json', '--since', '1h'], env);
    assert.equal(cli.code, 0, cli.stderr);
    const { all, keys } = JSON.parse(cli.stdout) as { all: Report; keys: Report[] };
    assert.equal(all.transactions.submitted, submitted);
    assert.equal(all.refused.byReason.invalid_request, 2);
    assert.deepEqual(
      keys.map((k) => [k.keyId, k.transactions.landed]),
      [[fromA.keyId, submitted]],
    );
  });
});
