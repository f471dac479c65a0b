/**
 * Webhooks end to end: a real gateway (embedded ledger) sends its key's submission events to
 * a real HTTP receiver, which verifies each with the npm package `standardwebhooks`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, type Connection } from '@solana/web3.js';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { runCli } from '../helpers/process';
import { sendTransaction, submitBatch } from '../helpers/rpc';
import { connect, failingTransferTx, fundedKeypair, transferTx } from '../helpers/solana';
import { startWebhookReceiver, type Received, type WebhookReceiver } from '../helpers/webhook-receiver';

const PRIVATE_OK = { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' };

describe('webhooks: every event of a submission reaches its key’s receiver, signed, in order', () => {
  let gateway: TestGateway;
  let receiver: WebhookReceiver;
  let key: string;
  let keyId: string;
  let connection: Connection;

  before(async () => {
    gateway = await startTestGateway({ webhookAllowPrivate: 'true' });
    receiver = await startWebhookReceiver();
    const created = await runCli(
      ['keys', 'create', '--name', 'hooked', '--webhook', receiver.url, '--json', '--data-dir', gateway.dataDir],
      PRIVATE_OK,
    );
    assert.equal(created.code, 0, created.stderr);
    const record = JSON.parse(created.stdout) as { id: string; key: string; webhookUrl: string; webhookSecret: string };
    assert.equal(record.webhookUrl, receiver.url);
    assert.match(record.webhookSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver.secret = record.webhookSecret;
    key = record.key;
    keyId = record.id;
    await waitForKey(gateway.url, key);
    connection = connect(gateway.url, key);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the gateway's copy of the keys, with the webhook
  });

  after(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  const of = (signature: string) => (received: readonly Received[]) => received.filter((r) => r.data.signature === signature);

  it('a transfer: transaction.forwarded with its routes, then transaction.landed with its slot, each verified', async () => {
    const from = await fundedKeypair(connection);
    const tx = await transferTx(connection, from, Keypair.generate().publicKey, 2_000_000);
    const answer = await sendTransaction(gateway.url, key, tx);
    const signature = (answer.body as { result: string }).result;
    assert.equal(typeof signature, 'string', JSON.stringify(answer.body));
    await receiver.until((r) => of(signature)(r).some((e) => e.type === 'transaction.landed'));
    const events = of(signature)(receiver.received);
    assert.deepEqual(
      events.map((e) => e.type),
      ['transaction.forwarded', 'transaction.landed'],
    );
    assert.ok(events.every((e) => e.verified));
    assert.deepEqual(events[0]!.data.routes, ['embedded']);
    const { value } = await connection.getSignatureStatuses([signature]);
    assert.equal(events[1]!.data.slot, value[0]!.slot);
    assert.equal(typeof events[1]!.data.msToLand, 'number');
    assert.equal(new Set(events.map((e) => e.id)).size, 2);
    assert.ok(events.every((e) => /^evt_[0-9a-f]{32}$/.test(e.id)));
  });

  it('a batch with a member that fails on chain: that member’s events end in transaction.failed with its reason and error', async () => {
    const from = await fundedKeypair(connection);
    const good = await transferTx(connection, from, Keypair.generate().publicKey, 3_000_000);
    const bad = await failingTransferTx(connection, from, Keypair.generate().publicKey);
    const answer = await submitBatch(gateway.url, key, [good, bad]);
    const [goodSig, badSig] = (answer.body as { signatures: string[] }).signatures;
    await receiver.until((r) => of(goodSig!)(r).length === 2 && of(badSig!)(r).length === 2);
    assert.deepEqual(
      of(goodSig!)(receiver.received).map((e) => e.type),
      ['transaction.forwarded', 'transaction.landed'],
    );
    const failed = of(badSig!)(receiver.received);
    assert.deepEqual(
      failed.map((e) => e.type),
      ['transaction.forwarded', 'transaction.failed'],
    );
    assert.equal(failed[1]!.data.reasonCode, 'failed_on_chain');
    assert.deepEqual(failed[1]!.data.submission, { kind: 'batch', position: 1 });
    assert.notEqual(failed[1]!.data.error, null);
  });

  it('a receiver down for a while gets every event once it is up, each id with one payload', async () => {
    receiver.failing = true;
    const from = await fundedKeypair(connection);
    const signatures: string[] = [];
    for (let i = 0; i < 3; i++) {
      const tx = await transferTx(connection, from, Keypair.generate().publicKey, 1_000_000 + i);
      signatures.push((await sendTransaction(gateway.url, key, tx)).body.result as string);
    }
    const startedRefusing = receiver.refused;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.ok(receiver.refused > startedRefusing, 'the gateway tried while the receiver was down');
    const shown = await runCli(['keys', 'show', keyId, '--json', '--data-dir', gateway.dataDir]);
    const webhook = (JSON.parse(shown.stdout) as { webhook: { pending: number; receiver: { lastError: string; failingSince: number } } })
      .webhook;
    assert.ok(webhook.pending >= 1);
    assert.match(webhook.receiver.lastError, /the receiver answered 503: down for maintenance/);
    receiver.failing = false;
    await receiver.until((r) => signatures.every((s) => of(s)(r).some((e) => e.type === 'transaction.landed')), 30_000);
    for (const signature of signatures)
      assert.deepEqual([...new Set(of(signature)(receiver.received).map((e) => e.type))], ['transaction.forwarded', 'transaction.landed']);
    const payloads = new Map<string, string>();
    for (const event of receiver.received) {
      assert.ok(event.verified);
      assert.equal(payloads.get(event.id) ?? event.body, event.body);
      payloads.set(event.id, event.body);
    }
  });
});

describe('webhook URLs: no request forgery through Slipway', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => gateway?.close());

  for (const url of [
    'http://127.0.0.1:9/hook',
    'http://10.0.0.8/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://localhost:8080/hook',
    'http://100.64.0.1/hook',
  ])
    it(`refuses ${url} unless the operator allows private addresses, naming the setting`, async () => {
      const created = await runCli(['keys', 'create', '--name', 'ssrf', '--webhook', url, '--data-dir', gateway.dataDir]);
      assert.equal(created.code, 1);
      assert.match(
        created.stderr,
        /keys create --webhook: the webhook's host .* address, which Slipway does not call unless the operator allows it \(setting webhookAllowPrivate, flag --webhook-allow-private true\)/,
      );
    });

  for (const [url, why] of [
    ['ftp://example.com/hook', /must be http or https \(got ftp\)/],
    ['file:///etc/passwd', /must be http or https \(got file\)/],
    ['https://user:pw@example.com/hook', /must not carry a user name or password/],
    ['not a url', /is not a URL/],
    ['https://example.com:0/hook', /names port 0/],
    ['https://example.com/hook#', /must not have a #fragment/],
    [`https://example.com/${'a'.repeat(3000)}`, /longer than 2048 characters/],
  ] as const)
    it(`refuses ${url.slice(0, 40)} saying what is wrong`, async () => {
      const created = await runCli(['keys', 'create', '--name', 'bad', '--webhook', url, '--data-dir', gateway.dataDir]);
      assert.equal(created.code, 1);
      assert.match(created.stderr, why);
    });
});
