/**
 * Webhooks in a cluster: two gateways sharing PostgreSQL and Redis, in front of a local
 * cluster, both delivering from the shared outbox to one receiver. Submissions go to
 * either; every event of each reaches the receiver once, in order per submission.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { runCli } from '../helpers/process';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { sendTransaction } from '../helpers/rpc';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const TRANSFERS = 12;

describe('webhooks from two gateways of a cluster', () => {
  const { schema, drop } = testSchema();
  const { prefix, clean } = testRedisPrefix();
  let cluster: Cluster;
  const gateways: TestGateway[] = [];
  let receiver: WebhookReceiver;
  let key: string;

  before(async () => {
    cluster = await startCluster(1, 50);
    const settings = {
      postgresUrl: POSTGRES_URL,
      postgresSchema: schema,
      redisUrl: REDIS_URL,
      redisKeyPrefix: prefix,
      webhookAllowPrivate: 'true',
    };
    const file = {
      upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } },
      rebroadcast: { intervalMs: 100, maxAttempts: 100, queueCapacity: 1000 },
    };
    for (let i = 0; i < 2; i++) gateways.push(await startTestGateway(settings, file));
    receiver = await startWebhookReceiver();
    const created = await runCli(['keys', 'create', '--name', 'hooked', '--webhook', receiver.url, '--json'], {
      SLIPWAY_POSTGRES_URL: POSTGRES_URL,
      SLIPWAY_POSTGRES_SCHEMA: schema,
      SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    assert.equal(created.code, 0, created.stderr);
    const record = JSON.parse(created.stdout) as { key: string; webhookSecret: string };
    receiver.secret = record.webhookSecret;
    key = record.key;
    for (const gateway of gateways) await waitForKey(gateway.url, key);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  });
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await cluster?.close();
    await receiver?.close();
    await drop();
    await clean();
  });

  it('delivers every event of submissions taken by either gateway exactly once, in order per submission', async () => {
    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    const signatures: string[] = [];
    for (let i = 0; i < TRANSFERS; i++) {
      const answer = await sendTransaction(gateways[i % 2]!.url, key, ledgerTransfer(cluster.ledger, payer, 1_000_000 + i));
      assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
      signatures.push(answer.body.result as string);
    }
    await receiver.until((r) => r.filter((e) => e.type === 'transaction.landed').length >= TRANSFERS, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // a second delivery, if one were coming
    const byId = new Map<string, number>();
    for (const event of receiver.received) byId.set(event.id, (byId.get(event.id) ?? 0) + 1);
    assert.deepEqual(
      [...byId.values()].filter((n) => n > 1),
      [],
      'no event delivered twice',
    );
    assert.equal(receiver.received.length, 2 * TRANSFERS);
    for (const signature of signatures)
      assert.deepEqual(
        receiver.received.filter((e) => e.data.signature === signature).map((e) => e.type),
        ['transaction.forwarded', 'transaction.landed'],
      );
    assert.ok(receiver.received.every((e) => e.verified));
  });
});
