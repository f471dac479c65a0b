/**
 * Webhooks as an operator and a key's owner live with them: anti-MEV holds and releases
 * told as they happen; a receiver that keeps failing paused, visible in `keys show` and the
 * metrics, and resumed by setting the webhook again (with a new secret); a key's queue
 * bounded; and an address the URL check let through (a name) refused when the delivery
 * connects.
 */
import assert from 'node:assert/strict';
import dns from 'node:dns';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair, type Connection } from '@solana/web3.js';
import { defaultValidatorIdentities } from '../../src/ledger/leader-schedule';
import { resolveConfig } from '../../src/config/config';
import { privateRange } from '../../src/events/webhook-url';
import { openStore } from '../../src/stores/database/open-store';
import { generateWebhookSecret } from '../../src/stores/key-store';
import { KEY_STORE } from '../../src/stores/store-adapters';
import { makeDataDir, startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { runCli } from '../helpers/process';
import { post, sendTransaction } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const PRIVATE_OK = { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' };

async function hookedKey(dataDir: string, receiver: WebhookReceiver): Promise<{ id: string; key: string }> {
  const created = await runCli(
    ['keys', 'create', '--name', 'hooked', '--webhook', receiver.url, '--json', '--data-dir', dataDir],
    PRIVATE_OK,
  );
  assert.equal(created.code, 0, created.stderr);
  const record = JSON.parse(created.stdout) as { id: string; key: string; webhookSecret: string };
  receiver.secret = record.webhookSecret;
  return record;
}

interface Shown {
  webhook: {
    url: string | null;
    pending: number;
    receiver: { pausedAt: number | null; failingSince: number | null; lastError: string | null; dropped: number } | null;
  };
}
const show = async (dataDir: string, id: string): Promise<Shown> =>
  JSON.parse((await runCli(['keys', 'show', id, '--json', '--data-dir', dataDir])).stdout) as Shown;

const metric = async (url: string, name: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
};

describe('webhook events of anti-MEV holds', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  let key: string;
  let connection: Connection;
  let policyFile: string;
  const policyDir = makeDataDir();

  before(async () => {
    policyFile = path.join(policyDir, 'policy.json');
    gw = await startTestGateway({ slotMs: 40, validatorPolicy: policyFile, policyRefreshMs: 100, webhookAllowPrivate: 'true' });
    receiver = await startWebhookReceiver();
    key = (await hookedKey(gw.dataDir, receiver)).key;
    await waitForKey(gw.url, key);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    connection = connect(gw.url, key);
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
    fs.rmSync(policyDir, { recursive: true, force: true });
  });

  const sendProtected = async (tx: string) =>
    (
      await post(
        `${gw.url}/?anti_mev=1`,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
        { 'x-api-key': key },
      )
    ).body.result as string;
  const typesOf = (signature: string) => receiver.received.filter((r) => r.data.signature === signature);

  it('held with the reason while no policy can be read, released once one trusts the leaders, then landed', async () => {
    const alice = await fundedKeypair(connection);
    const signature = await sendProtected(await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000));
    await receiver.until(() => typesOf(signature).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [held] = typesOf(signature);
    assert.equal(held!.type, 'transaction.held');
    assert.match(held!.data.reason as string, /policy\.json cannot be used: ENOENT/);
    fs.writeFileSync(policyFile, JSON.stringify({ deny: [] }));
    await receiver.until(() => typesOf(signature).some((e) => e.type === 'transaction.landed'));
    const events = typesOf(signature);
    assert.deepEqual(
      events.map((e) => e.type),
      ['transaction.held', 'transaction.released', 'transaction.landed'],
    );
    assert.deepEqual(events[1]!.data.routes, ['embedded']);
    assert.ok((events[1]!.data.heldMs as number) >= 300);
  });

  it('held, then expired with held_by_policy when no safe window opens before its blockhash expires', async () => {
    fs.writeFileSync(policyFile, JSON.stringify({ deny: defaultValidatorIdentities() }));
    await new Promise((resolve) => setTimeout(resolve, 250));
    const alice = await fundedKeypair(connection);
    const signature = await sendProtected(await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000));
    await receiver.until(() => typesOf(signature).some((e) => e.type === 'transaction.expired'), 30_000);
    const events = typesOf(signature);
    assert.deepEqual(
      events.map((e) => e.type),
      ['transaction.held', 'transaction.expired'],
    );
    assert.equal(events[1]!.data.reasonCode, 'held_by_policy');
  });
});

describe('a receiver that keeps failing, a full queue, and a name that resolves inside', () => {
  let gw: TestGateway;
  let connection: Connection;
  let payer: Keypair;
  before(async () => {
    gw = await startTestGateway({ webhookAllowPrivate: 'true', webhookPauseAfterSeconds: '2', webhookQueueLimit: '3' });
    connection = connect(gw.url, gw.key);
    payer = await fundedKeypair(connection, 20);
  });
  after(async () => gw?.close());

  const transfer = async (key: string) =>
    (await sendTransaction(gw.url, key, await transferTx(connection, payer, Keypair.generate().publicKey, 2_000_000))).body
      .result as string;

  it('is paused after failing for webhookPauseAfterSeconds, says so, and resumes with a new secret when its webhook is set again', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.failing = true;
      const { id, key } = await hookedKey(gw.dataDir, receiver);
      await waitForKey(gw.url, key);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const signature = await transfer(key);
      const paused = await (async () => {
        for (let i = 0; i < 100; i++) {
          const shown = await show(gw.dataDir, id);
          if (shown.webhook.receiver?.pausedAt) return shown;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        throw new Error('never paused');
      })();
      assert.match(paused.webhook.receiver!.lastError!, /the receiver answered 503/);
      assert.ok(paused.webhook.pending >= 1);
      assert.match((await runCli(['keys', 'show', id, '--data-dir', gw.dataDir])).stdout, /PAUSED since .*set the webhook again to resume/);
      // The gauge is set once the round that paused it has looked at every key.
      for (let i = 0; i < 20 && (await metric(gw.url, 'slipway_webhook_paused_receivers')) !== 1; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(await metric(gw.url, 'slipway_webhook_paused_receivers'), 1);
      // Paused: no more attempts.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const refused = receiver.refused;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.equal(receiver.refused, refused);

      receiver.failing = false;
      const set = await runCli(['keys', 'set', id, '--webhook', receiver.url, '--json', '--data-dir', gw.dataDir], PRIVATE_OK);
      const secret = (JSON.parse(set.stdout) as { webhookSecret: string }).webhookSecret;
      assert.notEqual(secret, receiver.secret);
      receiver.secret = secret;
      await receiver.until((r) => r.some((e) => e.type === 'transaction.landed' && e.data.signature === signature), 20_000);
      assert.ok(
        receiver.received.every((r) => r.verified),
        'signed with the new secret',
      );
      assert.equal((await show(gw.dataDir, id)).webhook.receiver!.pausedAt, null);
    } finally {
      await receiver.close();
    }
  });

  it('keeps at most webhookQueueLimit events waiting for a key, counting those dropped', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.failing = true;
      const { id, key } = await hookedKey(gw.dataDir, receiver);
      await waitForKey(gw.url, key);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const dropped = await metric(gw.url, 'slipway_webhook_events_dropped_total');
      for (let i = 0; i < 4; i++) await transfer(key);
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // all landed: 8 events derived
      const shown = await show(gw.dataDir, id);
      assert.equal(shown.webhook.pending, 3);
      assert.equal(shown.webhook.receiver!.dropped, 5);
      assert.equal((await metric(gw.url, 'slipway_webhook_events_dropped_total')) - dropped, 5);
    } finally {
      await receiver.close();
    }
  });

  it('does not call a name that resolves to a loopback or private address, and says why', async (t) => {
    // The machine's own name, which the URL check cannot judge (it is not an address): it resolves to one of the machine's.
    const name = os.hostname();
    const resolved = await dns.promises.lookup(name).catch(() => null);
    if (resolved === null || privateRange(resolved.address) === null)
      return t.skip(`this machine's name ${name} does not resolve to a non-public address here`);
    const receiver = await startWebhookReceiver();
    try {
      // A gateway of its own (private addresses not allowed), with a key whose webhook names the machine.
      const isolated = await startTestGateway();
      try {
        const store = await openStore(resolveConfig({ dataDir: isolated.dataDir }, {}), KEY_STORE);
        // Written to the store directly, as if the name had resolved elsewhere when it was set.
        const url = receiver.url.replace('127.0.0.1', name);
        const { record, key } = await store.create({ name: 'inside', bundle: false, webhook: { url, secret: generateWebhookSecret() } });
        await store.close();
        await waitForKey(isolated.url, key);
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        const own = connect(isolated.url, key);
        await sendTransaction(isolated.url, key, await transferTx(own, await fundedKeypair(own), Keypair.generate().publicKey, 2_000_000));
        for (let i = 0; i < 150 && (await show(isolated.dataDir, record.id)).webhook.receiver?.lastError == null; i++)
          await new Promise((resolve) => setTimeout(resolve, 100));
        const shown = await show(isolated.dataDir, record.id);
        assert.match(
          shown.webhook.receiver!.lastError!,
          new RegExp(
            `${name} \\(${resolved.address.replace(/\./g, '\\.')}\\) is a non-public \\(\\w+\\) address, which Slipway does not call unless the operator allows it`,
          ),
        );
        assert.equal(receiver.received.length + receiver.refused + receiver.unverified, 0, 'nothing reached the receiver');
      } finally {
        await isolated.close();
      }
    } finally {
      await receiver.close();
    }
  });
});
