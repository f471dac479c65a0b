/**
 * What one key holder can do to the others and to the gateway through the doors a key opens:
 * text it sends is cut short wherever it is repeated (answers, logs, the refusals kept), and
 * what the gateway knows of one key's submissions is not shown to another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { Keypair, VersionedTransaction, type Connection } from '@solana/web3.js';
import { createKey, startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { post, rpc } from '../helpers/rpc';
import { connect, failingTransferTx, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';

const firstSignature = (b64: string) => bs58.encode(VersionedTransaction.deserialize(Buffer.from(b64, 'base64')).signatures[0]!);

/** The same transaction with one byte of its message changed: its signature no longer verifies. */
function forged(b64: string): string {
  const bytes = Buffer.from(b64, 'base64');
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
  return bytes.toString('base64');
}

describe('key holders', () => {
  let gw: TestGateway;
  let connection: Connection;
  let other: string;

  before(async () => {
    // Bundles unsimulated: a failing one is executed and rejected, and its reason kept with it.
    gw = await startTestGateway({ slotMs: 50, simulateBundles: 'false' });
    connection = connect(gw.url, gw.key);
    other = await createKey(gw.dataDir, 'other', true);
    await waitForKey(gw.url, other);
  });
  after(() => gw.close());

  it('text copied from a request into an answer is cut short: an encoding of 60,000 characters, a method name, a path', async () => {
    const alice = await fundedKeypair(connection);
    const tx = await transferTx(connection, alice, Keypair.generate().publicKey, 1_000);
    const long = 'x'.repeat(60_000);
    const encoding = await rpc(gw.url, gw.key, 'sendTransaction', [tx, { encoding: long }]);
    assert.equal(encoding.body.error.code, -32602);
    assert.equal(encoding.body.error.message, `params[1].encoding must be "base64" (got "${'x'.repeat(63)}…)`);

    const method = await rpc(gw.url, gw.key, `get${long}`, []);
    assert.equal(method.body.error.code, -32601);
    assert.ok(method.body.error.message.length < 400, `${method.body.error.message.length} characters`);

    const path = await fetch(`${gw.url}/${long.slice(0, 8_000)}`);
    const body = (await path.json()) as { code: number; message: string };
    assert.equal(path.status, 404);
    assert.ok(body.message.startsWith(`no route for GET /${'x'.repeat(63)}…; Slipway serves`), body.message.slice(0, 120));

    // A target the router cannot decode: Slipway's shape, the target not echoed (it was Fastify's own answer, with the URL).
    const undecodable = await fetch(`${gw.url}/%ZZ${'y'.repeat(5_000)}`);
    assert.equal(undecodable.status, 400);
    assert.deepEqual(await undecodable.json(), { code: -32600, message: 'the request target is not a valid path (bad percent-encoding?)' });

    // The refusal kept for getSubmissionStatuses holds the short text too.
    const kept = await rpc(gw.url, gw.key, 'getSubmissionStatuses', [[firstSignature(tx)]]);
    assert.equal(kept.body.result.value[0].state, 'rejected');
    assert.ok(kept.body.result.value[0].reason.length < 300, kept.body.result.value[0].reason);
  });

  it('a refusal is kept per key: another key presenting the same signature neither replaces it nor reads it', async () => {
    const alice = await fundedKeypair(connection);
    const tx = forged(await transferTx(connection, alice, Keypair.generate().publicKey, 1_000));
    const signature = firstSignature(tx);
    const mine = await rpc(gw.url, gw.key, 'sendTransaction', [tx, { encoding: 'base64' }]);
    assert.equal(mine.body.error.code, -32003, JSON.stringify(mine.body));
    // The other key sends the same bytes, differently wrong (skipPreflight as a string).
    const theirs = await rpc(gw.url, other, 'sendTransaction', [tx, { encoding: 'base64', skipPreflight: 'yes' }]);
    assert.equal(theirs.body.error.code, -32602, JSON.stringify(theirs.body));

    const seenByMe = await rpc(gw.url, gw.key, 'getSubmission', [signature]);
    assert.equal(seenByMe.body.result.value.kind, 'refused');
    assert.equal(seenByMe.body.result.value.reason, `refused: ${mine.body.error.message}`);
    const seenByThem = await rpc(gw.url, other, 'getSubmission', [signature]);
    assert.equal(seenByThem.body.result.value.reason, `refused: ${theirs.body.error.message}`);
    const third = await createKey(gw.dataDir, 'third', false);
    await waitForKey(gw.url, third);
    assert.equal((await rpc(gw.url, third, 'getSubmission', [signature])).body.result.value, null);
  });

  it("getInflightBundleStatuses: any key sees a bundle's status, only its sender sees why it failed", async () => {
    const alice = await fundedKeypair(connection);
    const carol = await fundedKeypair(connection, 1);
    const bob = Keypair.generate();
    const txs = [await transferTx(connection, alice, bob.publicKey, 1_000_000), await failingTransferTx(connection, carol, bob.publicKey)];
    const sent = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'sendBundle', params: [txs, { encoding: 'base64' }] },
      { 'x-api-key': other },
    );
    assert.equal(sent.body.error.code, -32090, JSON.stringify(sent.body));
    const bundleId = sent.body.error.data.bundleId as string;

    const sender = await rpc(gw.url, other, 'getInflightBundleStatuses', [[bundleId]]);
    assert.equal(sender.body.result.value[0].status, 'Failed');
    assert.match(sender.body.result.value[0].err, /custom program error: 0x1/);
    const stranger = await rpc(gw.url, gw.key, 'getInflightBundleStatuses', [[bundleId]]);
    assert.deepEqual(stranger.body.result.value[0], { bundle_id: bundleId, status: 'Failed', landed_slot: null });
  });
});

describe('landed bytes sent again by another key, once the duplicate window has passed', () => {
  let gw: TestGateway;
  let connection: Connection;
  let other: string;

  before(async () => {
    gw = await startTestGateway({ slotMs: 50, duplicateTtlMs: 1_000 });
    connection = connect(gw.url, gw.key);
    other = await createKey(gw.dataDir, 'other', true);
    await waitForKey(gw.url, other);
  });
  after(() => gw.close());

  it("do not take over the sender's view of its submission, nor the public status", async () => {
    const alice = await fundedKeypair(connection);
    const tx = await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000);
    const signature = (await rpc(gw.url, gw.key, 'sendTransaction', [tx, { encoding: 'base64' }])).body.result as string;
    await until(
      async () => (await rpc(gw.url, gw.key, 'getSubmission', [signature])).body.result?.value?.state,
      (state) => state === 'landed',
      5_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // past the window: the gateway no longer remembers the bytes

    // Anyone can copy landed bytes from the chain and send them.
    const copied = await rpc(gw.url, other, 'sendTransaction', [tx, { encoding: 'base64' }]);
    assert.equal(copied.body.result, signature);
    const mine = (await rpc(gw.url, gw.key, 'getSubmission', [signature])).body.result.value;
    assert.equal(mine?.state, 'landed', `the sender still sees its own submission: ${JSON.stringify(mine)}`);
    const theirs = (await rpc(gw.url, other, 'getSubmission', [signature])).body.result.value;
    assert.equal(theirs?.kind, 'transaction', 'the copier sees its own');
    const status = (await rpc(gw.url, other, 'getSignatureStatuses', [[signature]])).body.result.value[0];
    assert.equal(status?.err, null);
  });
});
