/**
 * Webhook events across a takeover: a gateway process killed (-9) while what it forwarded is
 * unlanded; another gateway of the cluster takes the submissions over, and the receiver gets
 * each one's landing once, after its forwarding, with nothing lost, and no event but under
 * its one id (what the killed one delivered but had not marked comes again, as the same event).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { makeDataDir } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { runCli, startServer, type ServerProcess } from '../helpers/process';
import { post } from '../helpers/rpc';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const TRANSFERS = 8;

describe('webhook events across a takeover', () => {
  const { schema, drop } = testSchema();
  let cluster: Cluster;
  let receiver: WebhookReceiver;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const env = { SLIPWAY_POSTGRES_URL: POSTGRES_URL, SLIPWAY_POSTGRES_SCHEMA: schema, SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' };

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
    const server = await startServer(dir, { ...env, SLIPWAY_CONFIG: config, SLIPWAY_LOG_LEVEL: 'warn' });
    servers.push(server);
    return server;
  };

  before(async () => {
    cluster = await startCluster(2, 50);
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    for (const server of servers) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await cluster?.close();
    await receiver?.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    await drop();
  });

  it('the gateway that takes submissions over tells their landings, once each, after their forwarding', async () => {
    const a = await gateway(0);
    const b = await gateway(1);
    const created = await runCli(['keys', 'create', '--name', 'hooked', '--webhook', receiver.url, '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const { key, webhookSecret } = JSON.parse(created.stdout) as { key: string; webhookSecret: string };
    receiver.secret = webhookSecret;
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // both gateways' copies of the keys

    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    cluster.nodes[0]!.fault('drop'); // what A forwards stays unlanded
    const signatures: string[] = [];
    for (let i = 0; i < TRANSFERS; i++) {
      const tx = ledgerTransfer(cluster.ledger, payer, 1_000_000 + i);
      const answer = await post(
        a.url,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] },
        { 'x-api-key': key },
      );
      assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
      signatures.push(answer.body.result as string);
    }
    await receiver.until((r) => signatures.every((s) => r.some((e) => e.type === 'transaction.forwarded' && e.data.signature === s)));
    a.child.kill('SIGKILL');
    await a.exited;
    cluster.nodes[0]!.fault('none');

    await receiver.until((r) => signatures.every((s) => r.some((e) => e.type === 'transaction.landed' && e.data.signature === s)), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Delivery is at least once: an event A delivered but had not yet marked so when it was
    // killed comes again from B, with the same id and body, and a receiver keeps it once.
    const events = new Map<string, (typeof receiver.received)[number]>();
    for (const e of receiver.received) {
      const first = events.get(e.id);
      if (first === undefined) events.set(e.id, e);
      else assert.equal(e.body, first.body, `event ${e.id} delivered again is the same event`);
    }
    // A told some of them stuck before it was killed (30 slots of 50 ms): between the two, once.
    for (const signature of signatures)
      assert.match(
        [...events.values()]
          .filter((e) => e.data.signature === signature)
          .map((e) => e.type)
          .join(' '),
        /^transaction\.forwarded (transaction\.stuck )?transaction\.landed$/,
      );
    assert.ok(receiver.received.every((e) => e.verified));
    b.child.kill('SIGTERM');
    assert.equal(await b.exited, 0);
  });
});
