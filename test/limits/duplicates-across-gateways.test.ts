/**
 * Duplicate detection across gateways sharing Redis: two gateways in front of one local
 * cluster; the same transaction, batch or bundle sent to both is forwarded once and
 * answered the same by both.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { createRedisDuplicateClaims } from '../../src/stores/duplicate-claims-redis';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { post, sendTransaction, submitBatch } from '../helpers/rpc';

const { prefix, clean: cleanRedis } = testRedisPrefix();

describe('duplicates across gateways sharing Redis', () => {
  let cluster: Cluster;
  const gateways: TestGateway[] = [];

  before(async () => {
    cluster = await startCluster(1, 50);
    const node = cluster.nodes[0]!.url;
    for (let i = 0; i < 2; i++) {
      gateways.push(
        await startTestGateway(
          { redisUrl: REDIS_URL, redisKeyPrefix: prefix },
          {
            upstreams: { rpc: { type: 'rpc', urls: [node] }, engine: { type: 'jito', urls: [`${node}/api/v1`] } },
            routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'rpc' },
          },
        ),
      );
    }
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    await cluster.close();
    await cleanRedis();
  });

  const payer = () => {
    const keypair = Keypair.generate();
    cluster.ledger.airdrop(keypair.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    return keypair;
  };
  const transfer = (from: Keypair, lamports: number, tip = 0) => ledgerTransfer(cluster.ledger, from, lamports, tip);
  const sends = (method: string) => cluster.nodes[0]!.calls.filter((c) => c.method === method).length;
  const sendTo = (gw: TestGateway, tx: string) => sendTransaction(gw.url, gw.key, tx, { skipPreflight: true });

  it('the same transaction sent to both at once, and again later: forwarded once, the same signature from each', async () => {
    const from = payer();
    const tx = transfer(from, 1_000_000);
    const before = sends('sendTransaction');
    const answers = await Promise.all(gateways.map((gw) => sendTo(gw, tx)));
    assert.equal(answers[0]!.body.result, answers[1]!.body.result);
    assert.equal(typeof answers[0]!.body.result, 'string', JSON.stringify(answers[0]!.body));
    const again = await Promise.all(gateways.map((gw) => sendTo(gw, tx)));
    assert.deepEqual(
      again.map((a) => a.body.result),
      answers.map((a) => a.body.result),
    );
    assert.equal(sends('sendTransaction') - before, 1, 'forwarded once');
    // Journaled by exactly one of them.
    const journaled = await Promise.all(gateways.map(async (gw) => (await gw.app.journal.find(answers[0]!.body.result)).length));
    assert.deepEqual(journaled.sort(), [0, 1]);
  });

  it('a batch: each member forwarded once whichever gateway got it', async () => {
    const from = payer();
    const [a, b, c] = [transfer(from, 1_000_001), transfer(from, 1_000_002), transfer(from, 1_000_003)];
    const before = sends('sendTransaction');
    const [first, second] = await Promise.all([
      submitBatch(gateways[0]!.url, gateways[0]!.key, [a, b]),
      submitBatch(gateways[1]!.url, gateways[1]!.key, [b, c]),
    ]);
    assert.equal(first!.body.code, 1, JSON.stringify(first!.body));
    assert.equal(second!.body.code, 1, JSON.stringify(second!.body));
    assert.equal(first!.body.signatures[1], second!.body.signatures[0]);
    assert.equal(sends('sendTransaction') - before, 3, 'three distinct members, three sends');
  });

  it('a bundle sent to both: forwarded once, the same bundle ID from each', async () => {
    const from = payer();
    const bundle = [transfer(from, 2_000_000, 1_000_000)];
    const before = sends('sendBundle');
    const answers = await Promise.all(
      gateways.map((gw) =>
        post(gw.url, { jsonrpc: '2.0', id: 1, method: 'sendBundle', params: [bundle, { encoding: 'base64' }] }, { 'x-api-key': gw.key }),
      ),
    );
    assert.match(answers[0]!.body.result, /^[0-9a-f]{64}$/, JSON.stringify(answers[0]!.body));
    assert.equal(answers[1]!.body.result, answers[0]!.body.result);
    assert.equal(sends('sendBundle') - before, 1);
  });
});

describe('duplicate claims in Redis', () => {
  after(cleanRedis);

  it('done → duplicate; given back → claimable; a pending claim whose gateway died → unsettled after a wait, never a false duplicate', async () => {
    const [one, two] = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
    try {
      const a = createRedisDuplicateClaims(one, prefix, 60_000);
      const b = createRedisDuplicateClaims(two, prefix, 60_000);
      const id = crypto.randomBytes(16).toString('hex');
      assert.deepEqual(await a.claim([id]), ['claimed']);
      await a.confirm([id]);
      assert.deepEqual(await b.claim([id]), ['duplicate']);

      const back = crypto.randomBytes(16).toString('hex');
      assert.deepEqual(await a.claim([back]), ['claimed']);
      const waiting = b.claim([back]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await a.release([back]);
      assert.deepEqual(await waiting, ['claimed'], 'given back while the other waited: it takes the claim');

      const orphan = crypto.randomBytes(16).toString('hex');
      assert.deepEqual(await a.claim([orphan]), ['claimed']);
      const started = Date.now();
      assert.deepEqual(await b.claim([orphan]), ['unsettled']);
      assert.ok(Date.now() - started >= 1_900, 'it waited for the claim to settle');
    } finally {
      await one.quit();
      await two.quit();
    }
  });
});
