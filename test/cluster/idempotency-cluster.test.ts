/**
 * Idempotency-Key on a cluster: two gateways sharing PostgreSQL and Redis in front of a local
 * cluster's RPC node. Copies sent to both at once are one submission with one answer; a
 * different transaction under the key, on either gateway, is refused naming the first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { sendTransaction } from '../helpers/rpc';
import { balanceOf, connect, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

describe('Idempotency-Key on two gateways sharing PostgreSQL and Redis', () => {
  const { schema, drop } = testSchema();
  const { prefix, clean } = testRedisPrefix();
  let cluster: Cluster;
  const gateways: TestGateway[] = [];

  before(async () => {
    cluster = await startCluster(1, 50);
    const node = cluster.nodes[0]!.url;
    for (let i = 0; i < 2; i++) {
      gateways.push(
        await startTestGateway(
          { postgresUrl: POSTGRES_URL, postgresSchema: schema, redisUrl: REDIS_URL, redisKeyPrefix: prefix },
          { upstreams: { rpc: { type: 'rpc', urls: [node] } }, rebroadcast: { intervalMs: 200, maxAttempts: 1000, queueCapacity: 1000 } },
        ),
      );
    }
    await waitForKey(gateways[1]!.url, gateways[0]!.key);
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    await cluster.close();
    await drop();
    await clean();
  });

  const send = (gw: TestGateway, idempotencyKey: string, tx: string) =>
    sendTransaction(gw.url, gateways[0]!.key, tx, {}, { 'idempotency-key': idempotencyKey });

  it('copies to both gateways at once: one execution, one answer; another transaction under the key refused on either', async () => {
    const [a, b] = gateways as [TestGateway, TestGateway];
    const connection = connect(a.url, a.key);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = await transferTx(connection, alice, bob.publicKey, 1_000_000);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i % 2 === 0 ? a : b, 'pay-bob-1', tx)));
    const signature = answers[0]!.body.result;
    assert.equal(typeof signature, 'string', JSON.stringify(answers[0]!.body));
    for (const answer of answers) assert.equal(answer.body.result, signature, JSON.stringify(answer.body));
    assert.equal(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true').length, 9);
    await waitForStatus(connection, signature);

    const rebuilt = await Promise.all([2, 3].map((n) => transferTx(connection, alice, bob.publicKey, n * 1_000_000)));
    const refused = await Promise.all([send(a, 'pay-bob-1', rebuilt[0]!), send(b, 'pay-bob-1', rebuilt[1]!)]);
    for (const answer of refused) {
      assert.equal(answer.body.error?.code, -32088, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.error.data.signatures, [signature]);
    }
    // Different transactions under one fresh key, one to each gateway at once: one goes.
    const pair = await Promise.all([4, 5].map((n) => transferTx(connection, alice, bob.publicKey, n * 1_000_000)));
    const raced = await Promise.all([send(a, 'pay-bob-2', pair[0]!), send(b, 'pay-bob-2', pair[1]!)]);
    const taken = raced.findIndex((answer) => typeof answer.body.result === 'string');
    assert.ok(taken >= 0, JSON.stringify(raced.map((r) => r.body)));
    assert.equal(raced[1 - taken]!.body.error?.code, -32088);
    await waitForStatus(connection, raced[taken]!.body.result);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000 + (taken + 4) * 1_000_000);
  });
});
