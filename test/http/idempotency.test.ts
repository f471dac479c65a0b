/**
 * Idempotency-Key on sendTransaction, sendBundle and /submit-batch, through a gateway on the
 * embedded ledger: the same key and submission gets the first answer (nothing sent again,
 * even sent at once), a different submission under the key is refused naming the first, a
 * refusal frees the key, keys are per API key, and the first answer survives kill -9.
 * The transactions under one key differ (new blockhash, new amount), so the ledger's own
 * refusal of a processed signature cannot be what keeps a second one from executing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { makeDataDir, startTestGateway, type TestGateway } from '../helpers/gateway';
import { startServer } from '../helpers/process';
import { post } from '../helpers/rpc';
import { balanceOf, connect, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const send = (url: string, key: string, idempotencyKey: string | undefined, tx: string, id: unknown = 1) =>
  post(
    url,
    { jsonrpc: '2.0', id, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
    { 'x-api-key': key, ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) },
  );

describe('Idempotency-Key', () => {
  let gw: TestGateway;
  const started = startTestGateway().then((g) => (gw = g));
  after(() => gw.close());
  const newKey = () => `idem-${Math.random().toString(36).slice(2)}`;

  it('the same key and transaction sent at once: one execution, the same answer to every copy, all but one marked replayed', async () => {
    await started;
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = await transferTx(connection, alice, bob.publicKey, 1_000_000);
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(gw.url, gw.key, key, tx, i)));
    const signature = answers[0]!.body.result;
    assert.equal(typeof signature, 'string', JSON.stringify(answers[0]!.body));
    answers.forEach((answer, i) => {
      assert.equal(answer.body.result, signature);
      assert.equal(answer.body.id, i, 'each answer carries its own request id');
    });
    const replayed = answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true');
    assert.equal(replayed.length, 7, 'seven were answered from the first, which alone went to the pipeline');
    await waitForStatus(connection, signature);
    assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000);
  });

  it('a different transaction under a used key is refused (-32088) naming the first, and not sent', async () => {
    await started;
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const key = newKey();
    const first = await send(gw.url, gw.key, key, await transferTx(connection, alice, bob.publicKey, 1_000_000));
    await waitForStatus(connection, first.body.result);
    // The client timed out, rebuilt its transaction (another amount: other bytes) and sent it under the same key.
    const rebuilt = await transferTx(connection, alice, bob.publicKey, 2_000_000);
    const second = await send(gw.url, gw.key, key, rebuilt);
    assert.equal(second.body.error?.code, -32088, JSON.stringify(second.body));
    assert.match(
      second.body.error.message,
      new RegExp(
        `^Idempotency-Key "${key}" was first used at \\S+Z for a different submission: sendTransaction of transaction ${first.body.result}\\. This one was not sent\\.`,
      ),
    );
    assert.deepEqual(second.body.error.data.signatures, [first.body.result]);
    assert.equal(second.body.error.data.operation, 'sendTransaction');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000, 'only the first executed');
    // Under a new key it goes.
    const fresh = await send(gw.url, gw.key, newKey(), rebuilt);
    await waitForStatus(connection, fresh.body.result);
    assert.equal(await balanceOf(connection, bob.publicKey), 3_000_000);
  });

  it('different transactions under one key at once: exactly one is sent', async () => {
    await started;
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const txs = await Promise.all([1, 2, 3, 4].map((n) => transferTx(connection, alice, bob.publicKey, n * 1_000_000)));
    const key = newKey();
    const answers = await Promise.all(txs.map((tx) => send(gw.url, gw.key, key, tx)));
    const taken = answers.filter((answer) => typeof answer.body.result === 'string');
    assert.equal(taken.length, 1, JSON.stringify(answers.map((a) => a.body)));
    assert.deepEqual(
      answers
        .filter((answer) => answer.body.error !== undefined)
        .map((answer) => [answer.body.error.code, answer.body.error.data.signatures]),
      [1, 2, 3].map(() => [-32088, [taken[0]!.body.result]]),
    );
    await waitForStatus(connection, taken[0]!.body.result);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = txs.findIndex((_, i) => typeof answers[i]!.body.result === 'string');
    assert.equal(await balanceOf(connection, bob.publicKey), (sent + 1) * 1_000_000);
  });

  it('a refused submission frees its key; keys are per API key', async () => {
    await started;
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const key = newKey();
    const refused = await send(gw.url, gw.key, key, await failingTransferTx(connection, alice, bob.publicKey));
    assert.equal(refused.body.error?.code, -32002, 'its preflight fails');
    const good = await send(gw.url, gw.key, key, await transferTx(connection, alice, bob.publicKey, 1_000_000));
    assert.equal(typeof good.body.result, 'string', JSON.stringify(good.body));
    assert.equal(good.headers.get('idempotent-replayed'), null);
    // Another API key's use of the same Idempotency-Key is its own.
    const other = await send(gw.url, gw.plainKey, key, await transferTx(connection, alice, bob.publicKey, 2_000_000));
    assert.equal(typeof other.body.result, 'string', JSON.stringify(other.body));
    await waitForStatus(connection, other.body.result);
    assert.equal(await balanceOf(connection, bob.publicKey), 3_000_000);
  });

  it('sendBundle and /submit-batch: the first answer again, marked replayed; another submission refused with HTTP 422 on /submit-batch', async () => {
    await started;
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const bundle = [
      await transferTx(connection, alice, bob.publicKey, 1_000_000),
      await transferTx(connection, alice, bob.publicKey, 2_000_000),
    ];
    const bundleKey = newKey();
    const sendBundle = (txs: string[], id: number) =>
      post(
        gw.url,
        { jsonrpc: '2.0', id, method: 'sendBundle', params: [txs, { encoding: 'base64' }] },
        { 'x-api-key': gw.key, 'idempotency-key': bundleKey },
      );
    const first = await sendBundle(bundle, 1);
    assert.match(first.body.result, /^[0-9a-f]{64}$/, JSON.stringify(first.body));
    const again = await sendBundle(bundle, 2);
    assert.equal(again.body.result, first.body.result);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const other = await sendBundle([await transferTx(connection, alice, bob.publicKey, 4_000_000)], 3);
    assert.equal(other.body.error?.code, -32088);
    assert.equal(other.body.error.data.bundleId, first.body.result);
    assert.match(other.body.error.message, new RegExp(`sendBundle of bundle ${first.body.result}\\.`));

    const batchKey = newKey();
    const members = [
      await transferTx(connection, alice, bob.publicKey, 8_000_000),
      await transferTx(connection, alice, bob.publicKey, 16_000_000),
    ];
    const batch = (txs: string[]) =>
      post(`${gw.url}/submit-batch`, { params: { transactions: txs, options: [] } }, { 'x-api-key': gw.key, 'idempotency-key': batchKey });
    const b1 = await batch(members);
    assert.equal(b1.body.code, 1, JSON.stringify(b1.body));
    const b2 = await batch(members);
    assert.deepEqual(b2.body, b1.body);
    assert.equal(b2.headers.get('idempotent-replayed'), 'true');
    const b3 = await batch([members[0]!]);
    assert.equal(b3.status, 422);
    assert.equal(b3.body.code, -32088);
    assert.match(b3.body.message, /submitBatch of batch of 2 \(/);
    for (const signature of b1.body.signatures) await waitForStatus(connection, signature);
    assert.equal(await balanceOf(connection, bob.publicKey), 27_000_000, 'bundle and batch each executed once');
  });

  it('refuses a malformed Idempotency-Key, and one sent with a JSON-RPC batch, sending nothing', async () => {
    await started;
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = await transferTx(connection, alice, bob.publicKey, 1_000_000);
    for (const bad of ['x'.repeat(256), 'with space', 'tab\there']) {
      const answer = await send(gw.url, gw.key, bad, tx);
      assert.equal(answer.body.error?.code, -32600, bad);
      assert.match(answer.body.error.message, /^Idempotency-Key must be one header of 1 to 255 visible ASCII characters/);
      const batch = await post(
        `${gw.url}/submit-batch`,
        { params: { transactions: [tx], options: [] } },
        { 'x-api-key': gw.key, 'idempotency-key': bad },
      );
      assert.equal(batch.status, 400);
      assert.equal(batch.body.code, -32600);
    }
    const inBatch = await post(gw.url, [{ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }], {
      'x-api-key': gw.key,
      'idempotency-key': newKey(),
    });
    assert.equal(inBatch.body.error?.code, -32600);
    assert.match(inBatch.body.error.message, /^An Idempotency-Key names one submission/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await balanceOf(connection, bob.publicKey), 0);
  });
});

describe('Idempotency-Key across a kill -9', () => {
  const dir = makeDataDir();
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('after a restart the same key and transaction get the first answer, a different one the refusal; one execution', async () => {
    let server = await startServer(dir);
    const apiKey = server.initialKey!;
    let connection = connect(server.url, apiKey);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = await transferTx(connection, alice, bob.publicKey, 1_000_000);
    const first = await send(server.url, apiKey, 'order-42', tx);
    assert.equal(typeof first.body.result, 'string', JSON.stringify(first.body));
    await waitForStatus(connection, first.body.result);
    const rebuilt = await transferTx(connection, alice, bob.publicKey, 2_000_000);
    server.child.kill('SIGKILL');
    await server.exited;

    server = await startServer(dir);
    connection = connect(server.url, apiKey);
    try {
      const again = await send(server.url, apiKey, 'order-42', tx);
      assert.equal(again.body.result, first.body.result);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      const other = await send(server.url, apiKey, 'order-42', rebuilt);
      assert.equal(other.body.error?.code, -32088);
      assert.deepEqual(other.body.error.data.signatures, [first.body.result]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000);
      assert.ok((await balanceOf(connection, alice.publicKey)) > 9 * LAMPORTS_PER_SOL);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
});
