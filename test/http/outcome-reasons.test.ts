/**
 * Every submission that does not land ends with a code of the outcome-reason catalogue
 * (core/outcome-reasons.ts), read through getSubmissionStatuses and getInflightBundleStatuses
 * as a client reads them: refused at the edge, refused on its preflight, failed on chain,
 * expired, a bundle rejected whole.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { OUTCOME_REASONS } from '../../src/core/outcome-reasons';
import { rpc } from '../helpers/rpc';
import { failingTransferTx, transferTx } from '../helpers/solana';
import { useFundedGateway } from '../helpers/use-gateway';

describe('outcome reasons', () => {
  const ctx = useFundedGateway();

  const signatureOf = (base64: string) => bs58.encode(Buffer.from(base64, 'base64').subarray(1, 65));
  const send = (tx: string, skipPreflight = false) =>
    rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [tx, { encoding: 'base64', skipPreflight }]);
  /** How many sendBundle submissions /metrics counts with this outcome. */
  const bundlesCounted = async (outcome: string) => {
    const text = await (await fetch(`${ctx.gw.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`slipway_submissions_total{operation="sendBundle",outcome="${outcome}"}`));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const statusOf = async (id: string) => (await rpc(ctx.gw.url, ctx.gw.key, 'getSubmissionStatuses', [[id]])).body.result.value[0];

  it('a refusal at the edge: invalid_request; on its preflight: simulation_failed', async () => {
    const forged = Buffer.from(await transferTx(ctx.connection, ctx.payer, Keypair.generate().publicKey, 1_000_000), 'base64');
    forged[70]! ^= 1;
    const forgedText = forged.toString('base64');
    assert.equal((await send(forgedText)).body.error.code, -32003);
    const refused = await statusOf(signatureOf(forgedText));
    assert.deepEqual([refused.kind, refused.state, refused.reasonCode], ['refused', 'rejected', 'invalid_request']);

    const poor = Keypair.generate();
    const unpaid = await failingTransferTx(ctx.connection, ctx.payer, poor.publicKey);
    assert.equal((await send(unpaid)).body.error.code, -32002);
    assert.equal((await statusOf(signatureOf(unpaid))).reasonCode, 'simulation_failed');
  });

  it('failed on ctx.connection: failed_on_chain, with the error in words', async () => {
    const unpaid = await failingTransferTx(ctx.connection, ctx.payer, Keypair.generate().publicKey);
    const signature = (await send(unpaid, true)).body.result as string;
    // The tracker settles it once the ledger reports it confirmed (a slot or two).
    let status = await statusOf(signature);
    for (let round = 0; round < 100 && status.state === 'forwarded'; round++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await ctx.gw.app.tracker.runRound();
      status = await statusOf(signature);
    }
    assert.deepEqual([status.state, status.reasonCode], ['failed', 'failed_on_chain'], JSON.stringify(status));
    assert.match(status.reason, /custom program error: 0x1/);
    assert.equal(status.transactions[0].reasonCode, 'failed_on_chain');
  });

  it('an unknown blockhash: expired, blockhash_expired', async () => {
    const { Transaction, SystemProgram } = await import('@solana/web3.js');
    const tx = new Transaction({ feePayer: ctx.payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 9)) }).add(
      SystemProgram.transfer({ fromPubkey: ctx.payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(ctx.payer);
    const signature = (await send(tx.serialize().toString('base64'), true)).body.result as string;
    const status = await statusOf(signature);
    assert.deepEqual([status.state, status.reasonCode], ['expired', 'blockhash_expired'], JSON.stringify(status));
    // The words say what the code says: the blockhash expired, and what to do.
    assert.equal(
      status.reason,
      'its blockhash expired before it landed (the network answered: Blockhash not found); sign it again with a new blockhash',
    );
  });

  it('a bundle failing its simulation: simulation_failed, refused, never sent', async () => {
    const good = await transferTx(ctx.connection, ctx.payer, Keypair.generate().publicKey, 1_000_000);
    const bad = await failingTransferTx(ctx.connection, ctx.payer, Keypair.generate().publicKey);
    const [refusedBefore, rejectedBefore] = [await bundlesCounted('refused'), await bundlesCounted('rejected')];
    const answer = await rpc(ctx.gw.url, ctx.gw.key, 'sendBundle', [[good, bad], { encoding: 'base64' }]);
    assert.equal(answer.body.error.code, -32090);
    assert.equal(answer.body.error.data.simulated, true);
    assert.deepEqual([await bundlesCounted('refused'), await bundlesCounted('rejected')], [refusedBefore + 1, rejectedBefore]);
    const status = await statusOf(signatureOf(good));
    assert.deepEqual([status.kind, status.state, status.reasonCode], ['refused', 'rejected', 'simulation_failed'], JSON.stringify(status));
    const inflight = (await rpc(ctx.gw.url, ctx.gw.key, 'getInflightBundleStatuses', [[answer.body.error.data.bundleId]])).body.result;
    assert.equal(inflight.value[0].status, 'Invalid');
  });

  it('a bundle rejected whole when executed: engine_rejected in getSubmissionStatuses and getInflightBundleStatuses', async () => {
    // A member that already landed passes the simulation (a resend is no reason to refuse) and fails when executed.
    const landed = await transferTx(ctx.connection, ctx.payer, Keypair.generate().publicKey, 1_000_000);
    const signature = (await send(landed)).body.result as string;
    assert.equal(typeof signature, 'string');
    const fresh = await transferTx(ctx.connection, ctx.payer, Keypair.generate().publicKey, 2_000_000);
    const rejectedBefore = await bundlesCounted('rejected');
    const answer = await rpc(ctx.gw.url, ctx.gw.key, 'sendBundle', [[fresh, landed], { encoding: 'base64' }]);
    assert.equal(answer.body.error.code, -32090);
    assert.equal(answer.body.error.data.simulated, undefined);
    assert.equal(await bundlesCounted('rejected'), rejectedBefore + 1);
    const bundleId = answer.body.error.data.bundleId as string;
    const status = await statusOf(bundleId);
    assert.deepEqual([status.kind, status.state, status.reasonCode], ['bundle', 'rejected', 'engine_rejected'], JSON.stringify(status));
    const inflight = (await rpc(ctx.gw.url, ctx.gw.key, 'getInflightBundleStatuses', [[bundleId]])).body.result.value[0];
    assert.deepEqual([inflight.status, inflight.reason_code], ['Failed', 'engine_rejected']);
  });

  it('every code is documented in docs/API.md', async () => {
    const fs = await import('node:fs');
    const api = fs.readFileSync(`${__dirname}/../../../docs/API.md`, 'utf8');
    for (const code of Object.keys(OUTCOME_REASONS)) assert.ok(api.includes(`\`${code}\``), `docs/API.md does not document ${code}`);
  });
});
