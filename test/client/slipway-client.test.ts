/**
 * The typed client (`slipway/client`) against real gateways: every transaction form it
 * takes, both sendBundle result shapes normalised, refusals as typed errors, and the wait
 * and retry on 429 that Retry-After asks for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AccountRole,
  address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
} from '@solana/kit';
import { Keypair, SystemProgram, Transaction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { createSlipwayClient, SlipwayClientError } from '../../src/client';
import { computeBundleId } from '../../src/core/bundle-id';
import { runCli } from '../helpers/process';
import { startTestGateway, waitForKey } from '../helpers/gateway';
import { useGateway } from '../helpers/use-gateway';
import { balanceOf, connect, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import { until } from '../helpers/until';

const ctx = useGateway();

/** A @solana/kit transfer, signed with kit's own signer made from the same secret. */
async function kitTransfer(from: Keypair, to: Keypair, lamports: bigint) {
  const signer = await createKeyPairSignerFromBytes(from.secretKey);
  const { blockhash, lastValidBlockHeight } = await ctx.connection.getLatestBlockhash();
  const data = new Uint8Array(12);
  new DataView(data.buffer).setUint32(0, 2, true); // SystemInstruction::Transfer
  new DataView(data.buffer).setBigUint64(4, lamports, true);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) },
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: address('11111111111111111111111111111111'),
          accounts: [
            { address: signer.address, role: AccountRole.WRITABLE_SIGNER, signer },
            { address: address(to.publicKey.toBase58()), role: AccountRole.WRITABLE },
          ],
          data,
        },
        m,
      ),
  );
  return signTransactionMessageWithSigners(message);
}

describe('createSlipwayClient', () => {
  it('sends bytes, Base64, web3.js Transaction and VersionedTransaction, and @solana/kit transactions; each lands', async () => {
    const client = createSlipwayClient({ url: ctx.gw.url, apiKey: ctx.gw.key });
    const alice = await fundedKeypair(ctx.connection);
    const bobs = Array.from({ length: 5 }, () => Keypair.generate());
    const legacy = await transferTx(ctx.connection, alice, bobs[0]!.publicKey, 1_000_000);
    const { blockhash } = await ctx.connection.getLatestBlockhash();
    const versioned = new VersionedTransaction(
      new TransactionMessage({
        payerKey: alice.publicKey,
        recentBlockhash: blockhash,
        instructions: [SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bobs[3]!.publicKey, lamports: 4_000_000 })],
      }).compileToV0Message(),
    );
    versioned.sign([alice]);
    const web3Legacy = Transaction.from(Buffer.from(await transferTx(ctx.connection, alice, bobs[2]!.publicKey, 3_000_000), 'base64'));

    const signatures = [
      await client.sendTransaction(Buffer.from(legacy, 'base64')),
      await client.sendTransaction(await transferTx(ctx.connection, alice, bobs[1]!.publicKey, 2_000_000)),
      await client.sendTransaction(web3Legacy),
      await client.sendTransaction(versioned),
      await client.sendTransaction(await kitTransfer(alice, bobs[4]!, 5_000_000n)),
    ];
    for (const signature of signatures) assert.match(signature, /^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
    const statuses = await until(
      () => client.getStatuses(signatures),
      (all) => all.every((s) => s?.state === 'landed'),
    );
    assert.deepEqual(
      statuses.map((s) => s!.kind),
      ['transaction', 'transaction', 'transaction', 'transaction', 'transaction'],
    );
    for (const [i, bob] of bobs.entries()) assert.equal(await balanceOf(ctx.connection, bob.publicKey), (i + 1) * 1_000_000);
  });

  it('submitBatch answers the signatures in order', async () => {
    const client = createSlipwayClient({ url: ctx.gw.url, apiKey: ctx.gw.key });
    const alice = await fundedKeypair(ctx.connection);
    const txs = await Promise.all([1, 2, 3].map((i) => transferTx(ctx.connection, alice, Keypair.generate().publicKey, i * 1_000_000)));
    const signatures = await client.submitBatch(txs);
    assert.equal(signatures.length, 3);
    assert.deepEqual(
      (await client.getStatuses(signatures)).map((s) => s!.kind),
      ['batch member', 'batch member', 'batch member'],
    );
  });

  it('sendBundle gives { bundleId, signatures } whichever result shape the gateway is configured to answer', async () => {
    const bySignatures = await startTestGateway({ bundleResult: 'signatures' });
    try {
      const results = [];
      for (const target of [ctx.gw, bySignatures]) {
        const c = connect(target.url, target.key);
        const alice = await fundedKeypair(c);
        const txs = await Promise.all([1, 2].map((i) => transferTx(c, alice, Keypair.generate().publicKey, i * 1_000_000)));
        results.push(await createSlipwayClient({ url: target.url, apiKey: target.key }).sendBundle(txs));
      }
      for (const { bundleId, signatures } of results) {
        assert.equal(signatures.length, 2);
        assert.equal(bundleId, computeBundleId(signatures));
      }
      assert.equal(
        (await createSlipwayClient({ url: ctx.gw.url, apiKey: ctx.gw.key }).getStatuses([results[0]!.bundleId]))[0]!.kind,
        'bundle',
      );
    } finally {
      await bySignatures.close();
    }
  });

  it("refusals are SlipwayClientError with the server's code, message and request id", async () => {
    const client = createSlipwayClient({ url: ctx.gw.url, apiKey: ctx.gw.key });
    const alice = await fundedKeypair(ctx.connection);
    const damaged = Buffer.from(await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000), 'base64');
    damaged[5] = damaged[5]! ^ 0xff; // inside the signature
    await assert.rejects(client.sendTransaction(damaged), (error: unknown) => {
      assert.ok(error instanceof SlipwayClientError);
      assert.equal(error.code, -32003);
      assert.match(error.message, /^Transaction signature verification failure/);
      assert.equal(error.httpStatus, 200);
      assert.match(error.requestId!, /^[0-9a-f]{8}-/);
      assert.equal(error.retryable, false);
      return true;
    });
    await assert.rejects(
      client.submitBatch(['not base64!']),
      (error: unknown) => error instanceof SlipwayClientError && error.code === -32602 && error.httpStatus === 400,
    );
    await assert.rejects(
      createSlipwayClient({ url: ctx.gw.url, apiKey: 'slw_nope' }).sendTransaction('AAAA'),
      (error: unknown) => error instanceof SlipwayClientError && error.code === -32098 && error.httpStatus === 401,
    );
  });

  it('over a rate limit it waits as Retry-After says and sends again; with retries off it throws -32097', async () => {
    const created = await runCli(['keys', 'create', '--name', 'slow', '--tps', '1', '--data-dir', ctx.gw.dataDir]);
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    await waitForKey(ctx.gw.url, key);
    const alice = await fundedKeypair(ctx.connection);
    const txs = await Promise.all([1, 2, 3].map((i) => transferTx(ctx.connection, alice, Keypair.generate().publicKey, i * 1_000_000)));

    const impatient = createSlipwayClient({ url: ctx.gw.url, apiKey: key, maxRetries: 0 });
    await impatient.sendTransaction(txs[0]!);
    await assert.rejects(impatient.sendTransaction(txs[1]!), (error: unknown) => {
      assert.ok(error instanceof SlipwayClientError);
      assert.deepEqual([error.code, error.httpStatus, error.retryable], [-32097, 429, true]);
      assert.equal(typeof (error.data as { retryAfterMs: number }).retryAfterMs, 'number');
      return true;
    });

    let refusedOnce = 0;
    const counting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 429) refusedOnce += 1;
      return response;
    };
    const patient = createSlipwayClient({ url: ctx.gw.url, apiKey: key, fetch: counting });
    const signature = await patient.sendTransaction(txs[2]!);
    assert.match(signature, /^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
    assert.ok(refusedOnce >= 1, 'it was refused first, waited and was taken');
  });
  it('an answer lost on the way is asked for again under the same Idempotency-Key: the first answer, one execution', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const keys: (string | null)[] = [];
    let lose = true;
    // The request reaches the gateway and is answered; the answer never reaches the client.
    const lossy: typeof fetch = async (input, init) => {
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      const response = await fetch(input, init);
      if (!lose) return response;
      lose = false;
      await response.text();
      throw new TypeError('fetch failed: the connection was reset');
    };
    const client = createSlipwayClient({ url: ctx.gw.url, apiKey: ctx.gw.key, fetch: lossy });
    const signature = await client.sendTransaction(await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000));
    assert.equal(keys.length, 2, 'sent twice');
    assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
    assert.equal(keys[1], keys[0], 'under the same key');
    await waitForStatus(ctx.connection, signature);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);

    lose = true;
    const members = [await transferTx(ctx.connection, alice, bob.publicKey, 2_000_000)];
    const signatures = await client.submitBatch(members, { idempotencyKey: 'batch-7' });
    assert.deepEqual(keys.slice(2), ['batch-7', 'batch-7']);
    await waitForStatus(ctx.connection, signatures[0]!);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 3_000_000);

    // Each call has a key of its own; with retries off, a lost answer is thrown.
    await client.sendTransaction(await transferTx(ctx.connection, alice, bob.publicKey, 4_000_000));
    assert.notEqual(keys.at(-1), keys[0]);
    lose = true;
    const once = createSlipwayClient({ url: ctx.gw.url, apiKey: ctx.gw.key, fetch: lossy, maxRetries: 0 });
    await assert.rejects(once.sendTransaction(await transferTx(ctx.connection, alice, bob.publicKey, 8_000_000)), /connection was reset/);
  });
  it("getLandingReport: the key's own figures, counting what this test sent; a bad period is a SlipwayClientError -32602", async () => {
    const created = await runCli(['keys', 'create', '--name', 'reporting', '--data-dir', ctx.gw.dataDir]);
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    await waitForKey(ctx.gw.url, key);
    const client = createSlipwayClient({ url: ctx.gw.url, apiKey: key });
    const alice = await fundedKeypair(ctx.connection);
    const signatures = [
      await client.sendTransaction(await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000)),
      await client.sendTransaction(await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 2_000_000)),
    ];
    for (const signature of signatures) await waitForStatus(ctx.connection, signature);
    const report = await until(
      () => client.getLandingReport('1h'),
      (r) => r.transactions.landed === 2,
    );
    assert.deepEqual([report.transactions.submitted, report.transactions.landed, report.landedPercent], [2, 2, 100]);
    assert.equal(report.byOperation.sendTransaction.transactions.landed, 2);
    assert.equal(report.timeToLand.ms.samples, 2);
    await assert.rejects(
      client.getLandingReport('forever'),
      (error: unknown) => error instanceof SlipwayClientError && error.code === -32602,
    );
  });
  it('getLandingEstimate: the advice for a transaction of its own, with its evidence; a chance out of range is a SlipwayClientError -32602', async () => {
    const client = createSlipwayClient({ url: ctx.gw.url, apiKey: ctx.gw.key });
    const alice = await fundedKeypair(ctx.connection);
    const tx = await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000);
    const estimate = await client.getLandingEstimate({ transaction: tx, probability: 0.9, withinSlots: 8 });
    assert.equal(estimate.withinSlots, 8);
    // The chance answered is the curve's at the price answered: at least the chance asked for,
    // more when the earlier tests' landings at price 0 already give more.
    assert.ok(estimate.probability >= 0.9 && estimate.probability <= 1, String(estimate.probability));
    // Nothing on this ledger pays a priority fee: the advice is 0, and the fee the signature's.
    assert.equal(estimate.microLamportsPerComputeUnit, 0);
    assert.equal(estimate.feeLamports, 5_000);
    assert.ok([null, 0].includes(estimate.evidence.market.percentiles?.p99 ?? null), JSON.stringify(estimate.evidence));
    await assert.rejects(
      client.getLandingEstimate({ accountKeys: [], computeUnits: 600, probability: 1.5, withinSlots: 8 }),
      (error: unknown) =>
        error instanceof SlipwayClientError && error.code === -32602 && /probability must be a number/.test(error.message),
    );
  });
});
