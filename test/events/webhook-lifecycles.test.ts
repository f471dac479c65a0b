/**
 * The other ends a submission's events tell: a transaction stuck then expired (a node that
 * takes and drops everything), one the network refuses on arrival (expired, never
 * forwarded), a bundle, and the events of a gateway killed with -9 before its receiver took
 * them, delivered after its restart, even when the outbox itself was lost (derived again
 * from the journal).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import { createSlipwayClient } from '../../src/client';
import { startCluster, type Cluster } from '../helpers/cluster';
import { makeDataDir, startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { runCli, startServer } from '../helpers/process';
import { rpc, sendTransaction } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';
import { startWebhookReceiver, type Received, type WebhookReceiver } from '../helpers/webhook-receiver';

const PRIVATE_OK = { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' };
const SETTLE_MS = 1_100; // the gateway's copy of the keys, with the webhook

/** Creates a key with a webhook to `receiver` through the CLI, and gives the receiver its secret. */
async function hookedKey(dataDir: string, receiver: WebhookReceiver, extra: string[] = []): Promise<{ id: string; key: string }> {
  const created = await runCli(
    ['keys', 'create', '--name', 'hooked', '--webhook', receiver.url, '--json', '--data-dir', dataDir, ...extra],
    PRIVATE_OK,
  );
  assert.equal(created.code, 0, created.stderr);
  const record = JSON.parse(created.stdout) as { id: string; key: string; webhookSecret: string };
  receiver.secret = record.webhookSecret;
  return record;
}

const typesOf = (received: readonly Received[], signature: string) =>
  received
    .filter((r) => r.data.signature === signature || (r.data.signatures as string[] | undefined)?.includes(signature))
    .map((r) => r.type);

describe('webhook events of a transaction that never lands', () => {
  const SLOT_MS = 20;
  let cluster: Cluster;
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  let key: string;
  before(async () => {
    cluster = await startCluster(1, SLOT_MS);
    gw = await startTestGateway(
      { slotMs: String(SLOT_MS), webhookAllowPrivate: 'true', webhookStuckSlots: '10' },
      {
        upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } },
        rebroadcast: { intervalMs: 100, maxAttempts: 10_000, queueCapacity: 1000 },
      },
    );
    receiver = await startWebhookReceiver();
    key = (await hookedKey(gw.dataDir, receiver)).key;
    await waitForKey(gw.url, key);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  });
  after(async () => {
    await gw?.close();
    await cluster?.close();
    await receiver?.close();
  });

  it('forwarded, then stuck once it has gone webhookStuckSlots slots unlanded, then expired with blockhash_expired', async () => {
    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), BigInt(LAMPORTS_PER_SOL));
    const { blockhash } = await connect(gw.url, key).getLatestBlockhash();
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(payer);
    cluster.nodes[0]!.fault('drop');
    const answer = await sendTransaction(gw.url, key, tx.serialize().toString('base64'), { skipPreflight: true });
    const signature = answer.body.result as string;
    assert.equal(typeof signature, 'string', JSON.stringify(answer.body));
    await receiver.until((r) => typesOf(r, signature).includes('transaction.expired'), 30_000);
    assert.deepEqual(typesOf(receiver.received, signature), ['transaction.forwarded', 'transaction.stuck', 'transaction.expired']);
    const [, stuck, expired] = receiver.received.filter((r) => r.data.signature === signature);
    assert.ok((stuck!.data.slotsSinceReceipt as number) >= 10);
    assert.equal(expired!.data.reasonCode, 'blockhash_expired');
    assert.ok(receiver.received.every((r) => r.verified));
  });
});

describe('webhook events on the embedded ledger: refused on arrival, and bundles', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  let key: string;
  let connection: Connection;
  before(async () => {
    gw = await startTestGateway({ webhookAllowPrivate: 'true' });
    receiver = await startWebhookReceiver();
    key = (await hookedKey(gw.dataDir, receiver, ['--bundle'])).key;
    await waitForKey(gw.url, key);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    connection = connect(gw.url, key);
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('a blockhash the network does not know: transaction.expired alone (it was never forwarded)', async () => {
    const payer = await fundedKeypair(connection);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 9)) }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(payer);
    const signature = (await sendTransaction(gw.url, key, tx.serialize().toString('base64'), { skipPreflight: true })).body
      .result as string;
    await receiver.until((r) => typesOf(r, signature).length > 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(typesOf(receiver.received, signature), ['transaction.expired']);
    assert.equal(receiver.received.find((r) => r.data.signature === signature)!.data.reasonCode, 'blockhash_expired');
  });

  it('a bundle: bundle.forwarded, then bundle.landed, each naming the bundle and all its signatures', async () => {
    const payer = await fundedKeypair(connection);
    const members = [
      await transferTx(connection, payer, Keypair.generate().publicKey, 2_000_000),
      await transferTx(connection, payer, Keypair.generate().publicKey, 3_000_000),
    ];
    const answer = await rpc(gw.url, key, 'sendBundle', [members, { encoding: 'base64' }]);
    const bundleId = answer.body.result as string;
    assert.match(bundleId, /^[0-9a-f]{64}$/, JSON.stringify(answer.body));
    await receiver.until((r) => r.some((e) => e.type === 'bundle.landed' && e.data.bundleId === bundleId));
    const events = receiver.received.filter((r) => r.data.bundleId === bundleId);
    assert.deepEqual(
      events.map((e) => e.type),
      ['bundle.forwarded', 'bundle.landed'],
    );
    assert.equal((events[1]!.data.signatures as string[]).length, 2);
    assert.equal(typeof events[1]!.data.slot, 'number');
  });
});

describe('webhook events of a rejection', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  let key: string;
  before(async () => {
    gw = await startTestGateway({ webhookAllowPrivate: 'true' });
    receiver = await startWebhookReceiver();
    key = (await hookedKey(gw.dataDir, receiver, ['--bundle'])).key;
    await waitForKey(gw.url, key);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('a bundle the engine rejects whole when executed: bundle.rejected alone, with engine_rejected', async () => {
    const connection = connect(gw.url, key);
    const payer = await fundedKeypair(connection);
    // A member that already landed passes the simulation and fails when executed.
    const landed = await transferTx(connection, payer, Keypair.generate().publicKey, 1_000_000);
    assert.equal(typeof (await sendTransaction(gw.url, key, landed)).body.result, 'string');
    const fresh = await transferTx(connection, payer, Keypair.generate().publicKey, 2_000_000);
    const answer = await rpc(gw.url, key, 'sendBundle', [[fresh, landed], { encoding: 'base64' }]);
    assert.equal(answer.body.error.code, -32090, JSON.stringify(answer.body));
    const bundleId = answer.body.error.data.bundleId as string;
    await receiver.until((r) => r.some((e) => e.data.bundleId === bundleId));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = receiver.received.filter((e) => e.data.bundleId === bundleId);
    assert.deepEqual(
      events.map((e) => [e.type, e.data.reasonCode]),
      [['bundle.rejected', 'engine_rejected']],
    );
  });
});

describe('webhook events survive kill -9', () => {
  let receiver: WebhookReceiver;
  const dataDir = makeDataDir();
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('events waiting when the gateway was killed are delivered after its restart, and so are those of a lost outbox', async () => {
    const { key } = await hookedKey(dataDir, receiver);
    let server = await startServer(dataDir, PRIVATE_OK);
    await waitForKey(server.url, key);
    const connection = connect(server.url, key);
    receiver.failing = true;
    const payer = await fundedKeypair(connection);
    const first = (await sendTransaction(server.url, key, await transferTx(connection, payer, Keypair.generate().publicKey, 2_000_000)))
      .body.result as string;
    const refused = receiver.refused;
    await receiver.until(() => receiver.refused > refused + 1);
    server.child.kill('SIGKILL');
    await server.exited;

    // Restarted: what waited goes out once the receiver is up.
    receiver.failing = false;
    server = await startServer(dataDir, PRIVATE_OK);
    await receiver.until((r) => typesOf(r, first).includes('transaction.landed'), 30_000);
    assert.deepEqual([...new Set(typesOf(receiver.received, first))], ['transaction.forwarded', 'transaction.landed']);

    // Killed again, its outbox lost with the events in it: they are derived again from the journal.
    receiver.failing = true;
    await waitForKey(server.url, key);
    const second = (
      await sendTransaction(server.url, key, await transferTx(connect(server.url, key), payer, Keypair.generate().publicKey, 2_000_000))
    ).body.result as string;
    // Landed in the journal first: the restart finds it among the recent submissions, not the unfinished ones.
    const client = createSlipwayClient({ url: server.url, apiKey: key });
    await until(
      async () => (await client.getStatuses([second]))[0]?.state,
      (state) => state === 'landed',
      15_000,
    );
    server.child.kill('SIGKILL');
    await server.exited;
    for (const file of fs.readdirSync(dataDir).filter((f) => f.startsWith('events.sqlite'))) fs.rmSync(path.join(dataDir, file));
    receiver.failing = false;
    server = await startServer(dataDir, PRIVATE_OK);
    await receiver.until((r) => typesOf(r, second).includes('transaction.landed'), 30_000);
    assert.deepEqual([...new Set(typesOf(receiver.received, second))], ['transaction.forwarded', 'transaction.landed']);
    assert.ok(receiver.received.every((r) => r.verified));
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });
});
