/**
 * `submissionSubscribe` over WebSocket: the events a webhook gets, streamed to a key that
 * subscribes (with or without a webhook), filtered by signature or bundle ID or not at all,
 * and resumed after a dropped connection from the last event seen.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { Keypair, Transaction, type Connection } from '@solana/web3.js';
import WebSocket from 'ws';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { runCli } from '../helpers/process';
import { rpc, sendTransaction } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

interface StreamedEvent {
  readonly id: string;
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

/** A WebSocket on the gateway with what it was sent, as JSON. */
class Client {
  readonly messages: Record<string, unknown>[] = [];
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(String(data)) as Record<string, unknown>));
  }

  static async open(url: string, key: string): Promise<Client> {
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/?api-key=${key}`);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new Client(socket);
  }

  private nextId = 0;
  async call(method: string, params: unknown[]): Promise<Record<string, unknown>> {
    const id = ++this.nextId;
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return this.until(() => this.messages.find((m) => m.id === id));
  }

  events(subscription: number): StreamedEvent[] {
    return this.messages
      .filter((m) => m.method === 'submissionNotification' && (m.params as { subscription: number }).subscription === subscription)
      .map((m) => (m.params as { result: StreamedEvent }).result);
  }

  async until<T>(found: () => T | undefined, timeoutMs = 15_000): Promise<T> {
    const started = Date.now();
    for (;;) {
      const value = found();
      if (value !== undefined && value !== false) return value;
      if (Date.now() - started > timeoutMs)
        throw new Error(`not seen within ${timeoutMs} ms: ${JSON.stringify(this.messages).slice(0, 500)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  close(): void {
    this.socket.close();
  }
}

const signatureOf = (tx: string) => bs58.encode(Transaction.from(Buffer.from(tx, 'base64')).signatures[0]!.signature!);

describe('submissionSubscribe', () => {
  let gateway: TestGateway;
  let connection: Connection;
  let payer: Keypair;
  let receiver: WebhookReceiver;
  let hookedKey: string;

  before(async () => {
    gateway = await startTestGateway({ webhookAllowPrivate: 'true' });
    connection = connect(gateway.url, gateway.key);
    payer = await fundedKeypair(connection, 50);
    receiver = await startWebhookReceiver();
    const created = await runCli(
      ['keys', 'create', '--name', 'both', '--bundle', '--webhook', receiver.url, '--json', '--data-dir', gateway.dataDir],
      { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    );
    const record = JSON.parse(created.stdout) as { key: string; webhookSecret: string };
    receiver.secret = record.webhookSecret;
    hookedKey = record.key;
    await waitForKey(gateway.url, hookedKey);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  });
  after(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  const transfer = () => transferTx(connection, payer, Keypair.generate().publicKey, 2_000_000);

  it('streams every event of the key’s submissions to a key without a webhook, in order', async () => {
    const client = await Client.open(gateway.url, gateway.key);
    const subscribed = await client.call('submissionSubscribe', []);
    const subscription = subscribed.result as number;
    assert.equal(typeof subscription, 'number', JSON.stringify(subscribed));
    const tx = await transfer();
    const signature = (await sendTransaction(gateway.url, gateway.key, tx)).body.result as string;
    await client.until(() => client.events(subscription).some((e) => e.type === 'transaction.landed' && e.data.signature === signature));
    assert.deepEqual(
      client.events(subscription).map((e) => [e.type, e.data.signature]),
      [
        ['transaction.forwarded', signature],
        ['transaction.landed', signature],
      ],
    );
    assert.ok(client.events(subscription).every((e) => /^evt_[0-9a-f]{32}$/.test(e.id) && !Number.isNaN(Date.parse(e.timestamp))));
    assert.deepEqual((await client.call('submissionUnsubscribe', [subscription])).result, true);
    client.close();
  });

  it('by signature: only that transaction’s events; by bundle ID: only that bundle’s', async () => {
    const client = await Client.open(gateway.url, gateway.key);
    const mine = await transfer();
    const other = await transfer();
    const bySignature = (await client.call('submissionSubscribe', [{ signature: signatureOf(mine) }])).result as number;
    await sendTransaction(gateway.url, gateway.key, other);
    await sendTransaction(gateway.url, gateway.key, mine);
    await client.until(() => client.events(bySignature).some((e) => e.type === 'transaction.landed'));
    assert.deepEqual(new Set(client.events(bySignature).map((e) => e.data.signature)), new Set([signatureOf(mine)]));

    const members = [await transfer(), await transfer()];
    const all = (await client.call('submissionSubscribe', [{}])).result as number;
    const bundleId = (await rpc(gateway.url, gateway.key, 'sendBundle', [members, { encoding: 'base64' }])).body.result as string;
    const byBundle = (await client.call('submissionSubscribe', [{ bundleId }])).result as number;
    await client.until(() => client.events(all).some((e) => e.type === 'bundle.landed'));
    await client.until(() => client.events(byBundle).some((e) => e.type === 'bundle.landed'));
    // Subscribed after the bundle was forwarded: from then on.
    assert.deepEqual(
      client.events(byBundle).map((e) => [e.type, e.data.bundleId]),
      [['bundle.landed', bundleId]],
    );
    client.close();
  });

  it('resumes after a dropped connection from the last event seen, missing none and repeating none', async () => {
    const first = await Client.open(gateway.url, gateway.key);
    const subscription = (await first.call('submissionSubscribe', [])).result as number;
    const a = (await sendTransaction(gateway.url, gateway.key, await transfer())).body.result as string;
    const forwarded = await first.until(() => first.events(subscription).find((e) => e.data.signature === a));
    first.close(); // dropped right after its first event
    const b = (await sendTransaction(gateway.url, gateway.key, await transfer())).body.result as string;
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const again = await Client.open(gateway.url, gateway.key);
    const resumed = (await again.call('submissionSubscribe', [{ lastEventId: forwarded.id }])).result as number;
    await again.until(() =>
      [a, b].every((s) => again.events(resumed).some((e) => e.type === 'transaction.landed' && e.data.signature === s)),
    );
    const seen = again.events(resumed).map((e) => [e.type, e.data.signature]);
    // What came after the last event seen, and only that: a's landing, and all of b.
    assert.deepEqual(
      seen.filter(([, s]) => s === a),
      [['transaction.landed', a]],
    );
    assert.deepEqual(
      seen.filter(([, s]) => s === b),
      [
        ['transaction.forwarded', b],
        ['transaction.landed', b],
      ],
    );
    assert.equal(new Set(again.events(resumed).map((e) => e.id)).size, again.events(resumed).length);
    again.close();
  });

  it('streams the same JSON its webhook receives', async () => {
    const client = await Client.open(gateway.url, hookedKey);
    const subscription = (await client.call('submissionSubscribe', [])).result as number;
    const signature = (await sendTransaction(gateway.url, hookedKey, await transfer())).body.result as string;
    await client.until(() => client.events(subscription).some((e) => e.type === 'transaction.landed'));
    await receiver.until((r) => r.some((e) => e.type === 'transaction.landed' && e.data.signature === signature));
    for (const event of client.events(subscription)) {
      const delivered = receiver.received.find((r) => r.id === event.id);
      assert.deepEqual(JSON.parse(delivered!.body), event);
    }
    client.close();
  });

  it('refuses malformed subscriptions, naming what is wrong', async () => {
    const client = await Client.open(gateway.url, gateway.key);
    const cases: [unknown[], RegExp][] = [
      [[{ signature: 'abc' }], /params\[0\]\.signature is not a transaction signature/],
      [[{ signature: signatureOf(await transfer()), bundleId: 'a'.repeat(64) }], /a signature or a bundleId, not both/],
      [[{ bundleId: 'A'.repeat(64) }], /params\[0\]\.bundleId is not a bundle ID/],
      [[{ commitment: 'confirmed' }], /params\[0\]\.commitment is not a filter: give signature, bundleId or lastEventId/],
      [[{ lastEventId: 'evt_1' }], /params\[0\]\.lastEventId is not an event id/],
      [[{ lastEventId: `evt_${'0'.repeat(32)}` }], /is not an event of this key still kept/],
      [['everything'], /params\[0\] must be an object/],
      [[{}, {}], /params takes at most one object/],
      [[{ ['__proto__']: 1 }], /is not a filter|must be an object/],
    ];
    for (const [params, why] of cases) {
      const answer = await client.call('submissionSubscribe', params);
      const error = answer.error as { code: number; message: string };
      assert.equal(error?.code, -32602, JSON.stringify(answer));
      assert.match(error.message, why);
    }
    const unknown = await client.call('submissionUnsubscribe', [987_654]);
    assert.match((unknown.error as { message: string }).message, /Invalid subscription id/);
    client.close();
  });
});
