import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { JitoJsonRpcClient } from 'jito-js-rpc';
import { startTestGateway } from '../helpers/gateway';
import { TOPOLOGY, useGateway } from '../helpers/use-gateway';
import { until } from '../helpers/until';
import { post, rpc } from '../helpers/rpc';
import { balanceOf, connect, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const ctx = useGateway();

const sendBundle = (txs: unknown, key = ctx.gw.key, config: unknown = { encoding: 'base64' }) =>
  rpc(ctx.gw.url, key, 'sendBundle', [txs, config]);

/**
 * Why a bundle was rejected, and its ID. The embedded ledger rejects it in the answer
 * (-32090); a block engine answers the ID at once and says it failed through the bundle
 * statuses (docs/API.md, sendBundle), which is what a cluster's gateways face.
 */
async function rejectionOf(answer: {
  body: { result?: string; error?: { code: number; message: string; data: { bundleId: string } } };
}): Promise<{ bundleId: string; reason: string }> {
  // Rejected at once: executed by the embedded ledger.
  if (TOPOLOGY === 'single' || answer.body.error !== undefined) {
    assert.equal(answer.body.error!.code, -32090);
    return { bundleId: answer.body.error!.data.bundleId, reason: answer.body.error!.message };
  }
  const bundleId = answer.body.result!;
  const failed = await until(
    async () => (await rpc(ctx.gw.url, ctx.gw.key, 'getInflightBundleStatuses', [[bundleId]])).body.result.value[0],
    (status: { status: string; err?: string }) => status.status === 'Failed',
  );
  return { bundleId, reason: failed.err! };
}
/** The all-permissions key's landing report (getLandingReport), as far as these tests read it. */
const landingReport = async (): Promise<{
  transactions: { submitted: number; rejected: number };
  refused: { byReason: Record<string, number> };
}> => (await rpc(ctx.gw.url, ctx.gw.key, 'getLandingReport', [])).body.result;
const firstSignature = (tx: string) => bs58.encode(Transaction.from(Buffer.from(tx, 'base64')).signature!);
/** Jito's derivation, written out independently of Slipway's code. */
const expectedBundleId = (txs: string[]) => crypto.createHash('sha256').update(txs.map(firstSignature).join(',')).digest('hex');

describe('sendBundle', () => {
  it('executes a bundle atomically and in order, and returns the Jito bundle ID', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    // The second transfer spends what the first one gave bob: it works only in order.
    const first = await transferTx(ctx.connection, alice, bob.publicKey, 2 * LAMPORTS_PER_SOL);
    const { blockhash } = await ctx.connection.getLatestBlockhash();
    const second = new Transaction({ feePayer: bob.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: bob.publicKey, toPubkey: alice.publicKey, lamports: LAMPORTS_PER_SOL }),
    );
    second.sign(bob);
    const txs = [first, second.serialize().toString('base64')];
    const answer = await sendBundle(txs);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.result, expectedBundleId(txs));
    assert.match(answer.body.result, /^[0-9a-f]{64}$/);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), LAMPORTS_PER_SOL - 5000);
    assert.equal(await balanceOf(ctx.connection, alice.publicKey), 10 * LAMPORTS_PER_SOL - 2 * LAMPORTS_PER_SOL - 5000 + LAMPORTS_PER_SOL);

    const statuses = await rpc(ctx.gw.url, ctx.gw.key, 'getBundleStatuses', [[answer.body.result]]);
    const status = statuses.body.result.value[0];
    assert.equal(status.bundle_id, answer.body.result);
    assert.deepEqual(status.err, { Ok: null });
    assert.equal(status.transactions.length, 2);
    const inflight = await rpc(ctx.gw.url, ctx.gw.key, 'getInflightBundleStatuses', [[answer.body.result, 'f'.repeat(64)]]);
    assert.equal(inflight.body.result.value[0].status, 'Landed');
    assert.equal(inflight.body.result.value[1].status, 'Invalid');
  });

  it('refuses a bundle whose last transaction fails on its simulation, on every route alike: simulation_failed, counted as refused, nothing sent', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const carol = await fundedKeypair(ctx.connection, 1);
    const bob = Keypair.generate();
    const aliceBefore = await balanceOf(ctx.connection, alice.publicKey);
    const reportBefore = await landingReport();
    const txs = [
      await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000),
      await transferTx(ctx.connection, alice, bob.publicKey, 2_000_000),
      await failingTransferTx(ctx.connection, carol, bob.publicKey),
    ];
    const answer = await sendBundle(txs);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.error.code, -32090, JSON.stringify(answer.body));
    assert.match(
      answer.body.error.message,
      /^Bundle refused before sending: in its simulation, transaction 3 of 3 \(\w+\) failed: Error processing Instruction 0: custom program error: 0x1; nothing was sent$/,
    );
    assert.equal(answer.body.error.data.bundleId, expectedBundleId(txs));
    assert.equal(answer.body.error.data.failedTransactionIndex, 2);
    assert.equal(answer.body.error.data.simulated, true);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 0);
    assert.equal(await balanceOf(ctx.connection, alice.publicKey), aliceBefore, 'not even a fee');
    assert.equal(await balanceOf(ctx.connection, carol.publicKey), LAMPORTS_PER_SOL, 'the failing member paid no fee');
    const { value } = await ctx.connection.getSignatureStatuses(txs.map(firstSignature));
    assert.deepEqual(value, [null, null, null], 'none appears as processed');
    // Never sent: the route and the journal know nothing of it; the refusals do, by its members' signatures.
    const inflight = await rpc(ctx.gw.url, ctx.gw.key, 'getInflightBundleStatuses', [[answer.body.error.data.bundleId]]);
    assert.equal(inflight.body.result.value[0].status, 'Invalid');
    const status = (await rpc(ctx.gw.url, ctx.gw.key, 'getSubmissionStatuses', [[firstSignature(txs[0]!)]])).body.result.value[0];
    assert.deepEqual([status.kind, status.state, status.reasonCode], ['refused', 'rejected', 'simulation_failed'], JSON.stringify(status));
    // The landing report: three transactions refused on their simulation, none sent and rejected.
    const refusedBefore = reportBefore.refused.byReason.simulation_failed ?? 0;
    const reportAfter = await until(landingReport, (r) => (r.refused.byReason.simulation_failed ?? 0) === refusedBefore + 3, 5_000);
    assert.equal(reportAfter.transactions.rejected, reportBefore.transactions.rejected);
    assert.equal(reportAfter.transactions.submitted, reportBefore.transactions.submitted);

    // Rejected means not processed: the first member alone, then the first two as a bundle.
    const alone = await rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [txs[0], { encoding: 'base64' }]);
    await waitForStatus(ctx.connection, alone.body.result);
    const again = await sendBundle([txs[1]]);
    assert.equal(typeof again.body.result, 'string');
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 3_000_000);
  });

  it('answers a landed bundle sent again with its ID, without executing it twice', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const txs = [await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000)];
    const first = await sendBundle(txs);
    const second = await sendBundle(txs);
    assert.equal(second.body.result, first.body.result);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
  });

  it('a bundle containing a transaction that already landed is rejected whole', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const landed = await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000);
    await waitForStatus(
      ctx.connection,
      (await rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [landed, { encoding: 'base64' }])).body.result,
    );
    const fresh = await transferTx(ctx.connection, alice, bob.publicKey, 5_000_000);
    const answer = await sendBundle([fresh, landed]);
    assert.match((await rejectionOf(answer)).reason, /transaction 2 of 2 .* failed: This transaction has already been processed/);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
  });

  it('refuses a key without bundle permission with HTTP 403', async () => {
    const answer = await sendBundle(['AAAA'], ctx.gw.plainKey);
    assert.equal(answer.status, 403);
    assert.equal(answer.body.error.code, -32099);
    assert.match(
      answer.body.error.message,
      /may not call sendBundle: bundles are enabled per key \(bin\/slipway keys set key_\w+ --bundle on\)/,
    );
    assert.equal(answer.body.id, 1);
  });

  it('refuses the same transaction twice, more than 5, none, and a bad encoding; the params in their order (a list that is not one before a missing config)', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const tx = await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000);
    const twice = await sendBundle([tx, tx]);
    assert.equal(twice.body.error.code, -32602);
    assert.equal(
      twice.body.error.message,
      'transaction 2 (params[0][1]) repeats transaction 1: a bundle cannot contain the same transaction twice',
    );
    const six = await sendBundle([tx, tx, tx, tx, tx, tx]);
    assert.equal(six.body.error.message, 'params[0] has 6 transactions; at most 5');
    const none = await sendBundle([]);
    assert.equal(none.body.error.message, 'params[0] is empty: a bundle needs 1 to 5 transactions');
    for (const params of [['x'], [tx], [[tx, 7]]]) {
      const answer = await rpc(ctx.gw.url, ctx.gw.key, 'sendBundle', params);
      assert.equal(answer.body.error.code, -32602);
      assert.equal(
        answer.body.error.message,
        params[0] === 'x' || params[0] === tx
          ? 'params[0] must be an array of 1 to 5 Base64 transactions'
          : 'transaction 2 (params[0][1]) must be a Base64 string',
      );
    }
    assert.equal(
      (await rpc(ctx.gw.url, ctx.gw.key, 'sendBundle', [[tx]])).body.error.message,
      'params[1] is required: pass {"encoding": "base64"}',
    );
    const encoding = await sendBundle([tx], ctx.gw.key, { encoding: 'base58' });
    assert.equal(encoding.body.error.message, 'params[1].encoding must be "base64" (got "base58")');
    const unsigned = Buffer.from(tx, 'base64');
    unsigned.fill(0, 1, 65);
    const notSigned = await sendBundle([unsigned.toString('base64')]);
    assert.equal(notSigned.body.error.code, -32003);
    assert.match(
      notSigned.body.error.message,
      /^transaction 1 \(params\[0\]\[0\]\): Transaction signature verification failure: signature 0 .* is empty: the transaction is not fully signed$/,
    );
  });
});

describe('Jito-compatible paths', () => {
  it('jito-js-rpc sends a bundle with the key as its uuid and reads its status', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const client = new JitoJsonRpcClient(`${ctx.gw.url}/api/v1`, ctx.gw.key);
    const tipAccounts = await client.getTipAccounts();
    const accounts = tipAccounts.result ?? [];
    assert.equal(accounts.length, 8);
    const tip = new PublicKey(accounts[0]!);
    const tipBefore = await balanceOf(ctx.connection, tip);
    const bob = Keypair.generate();
    const { blockhash } = await ctx.connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: alice.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob.publicKey, lamports: 1_000_000 }),
      SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: tip, lamports: 1_000 }), // the minimum: the tip account exists from genesis
    );
    tx.sign(alice);
    const encoded = tx.serialize().toString('base64');
    const sent = await client.sendBundle([[encoded], { encoding: 'base64' }]);
    assert.equal(sent.result, expectedBundleId([encoded]));
    const landed = await client.confirmInflightBundle(sent.result!, 5000);
    assert.equal((landed as { bundle_id?: string }).bundle_id, sent.result);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
    assert.equal(await balanceOf(ctx.connection, tip), tipBefore + 1_000);
  });

  it('accepts the key in x-jito-auth and uuid on Jito paths only', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'getTipAccounts', params: [] };
    assert.equal((await post(`${ctx.gw.url}/api/v1/bundles`, body, { 'x-jito-auth': ctx.gw.key })).status, 200);
    assert.equal((await post(`${ctx.gw.url}/api/v1/transactions?uuid=${ctx.gw.key}`, body)).status, 200);
    assert.equal((await post(`${ctx.gw.url}/?uuid=${ctx.gw.key}`, body)).status, 401);
    assert.equal((await post(`${ctx.gw.url}/`, body, { 'x-jito-auth': ctx.gw.key })).status, 401);
  });

  it('sendTransaction on /api/v1/transactions lands a transaction', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const client = new JitoJsonRpcClient(`${ctx.gw.url}/api/v1`, ctx.gw.key);
    const tx = await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000);
    const sent = await client.sendTxn([tx, { encoding: 'base64' }]);
    await waitForStatus(ctx.connection, sent.result!);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
  });
});

describe('sendBundle result shape setting', () => {
  it('answers the array of signatures when bundleResult is "signatures"', async () => {
    const other = await startTestGateway({ bundleResult: 'signatures' });
    try {
      const c = connect(other.url, other.key);
      const alice = await fundedKeypair(c);
      const txs = [
        await transferTx(c, alice, Keypair.generate().publicKey, 1_000_000),
        await transferTx(c, alice, Keypair.generate().publicKey, 1_000_001),
      ];
      const answer = await rpc(other.url, other.key, 'sendBundle', [txs, { encoding: 'base64' }]);
      assert.deepEqual(answer.body.result, txs.map(firstSignature));
    } finally {
      await other.close();
    }
  });
});
