/**
 * Redis or PostgreSQL restarted under a gateway: requests in the gap get a clear 503
 * (-32094, Retry-After) at once, never a hang or a false success; the gateway reconnects by
 * itself; and everything it answered with success is journaled and followed to landing.
 * Each test runs its own private server on a spare port (test/helpers/private-services.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { startPrivatePostgres, startPrivateRedis, type PrivateService } from '../helpers/private-services';
import { post } from '../helpers/rpc';
import { until } from '../helpers/until';

describe('shared stores restarted under a gateway', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster(1, 50);
  });
  after(() => cluster.close());

  const payer = () => {
    const keypair = Keypair.generate();
    cluster.ledger.airdrop(keypair.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    return keypair;
  };
  const transfer = (from: Keypair, lamports: number) => ledgerTransfer(cluster.ledger, from, lamports);
  const network = () => ({
    upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } },
    rebroadcast: { intervalMs: 200, maxAttempts: 1000, queueCapacity: 1000 },
  });

  /** Sends one fresh transfer; returns the answer and how long it took. */
  const sendOne = async (gw: TestGateway, from: Keypair, lamports: number) => {
    const started = Date.now();
    const answer = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [transfer(from, lamports), { encoding: 'base64' }] },
      { 'x-api-key': gw.key },
    );
    return { answer, ms: Date.now() - started };
  };

  it('Redis: 503 at once while it is down, success again once it is back', async () => {
    const redis: PrivateService = await startPrivateRedis();
    const gw = await startTestGateway({ redisUrl: redis.url }, network());
    try {
      const from = payer();
      const accepted: string[] = [];
      const ok = await sendOne(gw, from, 1_000_000);
      accepted.push(ok.answer.body.result);
      assert.equal(typeof ok.answer.body.result, 'string');

      await redis.stop();
      const down = await sendOne(gw, from, 2_000_000);
      assert.equal(down.answer.status, 503);
      assert.equal(down.answer.body.error.code, -32094);
      assert.match(down.answer.body.error.message, /^duplicate detection cannot reach its store \(.+\); nothing was submitted, try again$/);
      assert.equal(down.answer.headers.get('retry-after'), '1');
      assert.ok(down.ms < 1_000, `answered in ${down.ms} ms`);

      await redis.start();
      const back = await until(
        () => sendOne(gw, from, 3_000_000),
        (r) => r.answer.status === 200,
        15_000,
      );
      accepted.push(back.answer.body.result);
      for (const signature of accepted)
        await until(
          () => cluster.ledger.getSignatureStatus(signature),
          (s) => s !== undefined,
        );
    } finally {
      await gw.close();
      await redis.destroy();
    }
  });

  it('PostgreSQL: 503 at once while it is down, success again once it is back; every success journaled and landed', async () => {
    const postgres: PrivateService = await startPrivatePostgres();
    const gw = await startTestGateway({ postgresUrl: postgres.url, postgresSchema: 'slipway' }, network());
    try {
      const from = payer();
      const accepted: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { answer } = await sendOne(gw, from, 1_000_000 + i);
        assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
        accepted.push(answer.body.result);
      }

      await postgres.stop();
      const down = await sendOne(gw, from, 2_000_000);
      assert.equal(down.answer.status, 503, JSON.stringify(down.answer.body));
      assert.equal(down.answer.body.error.code, -32094);
      assert.match(down.answer.body.error.message, /^the journal could not record the submission \(.+\); it may have been forwarded/);
      assert.ok(down.ms < 3_000, `answered in ${down.ms} ms`);

      await postgres.start();
      for (let i = 0; i < 3; i++) {
        const back = await until(
          () => sendOne(gw, from, 3_000_000 + i),
          (r) => r.answer.status === 200,
          15_000,
        );
        accepted.push(back.answer.body.result);
      }
      // Every success is in the journal, and followed to landed there.
      for (const signature of accepted) {
        await until(
          async () => (await gw.app.journal.find(signature).catch(() => []))[0]?.transactions[0]?.state,
          (state) => state === 'landed',
          15_000,
        );
      }
    } finally {
      await gw.close();
      await postgres.destroy();
    }
  });
});
