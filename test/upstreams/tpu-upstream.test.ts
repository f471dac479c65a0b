/**
 * The TPU route end to end: a gateway whose upstream is `tpu`, in front of the local cluster
 * with its QUIC TPUs (one per validator, test/helpers/tpu-cluster.ts). A transfer, a batch
 * and a protected transaction land through the leaders' TPUs, each recorded by the cluster
 * with the gateway's configured identity as its sender; a protected one is seen only by
 * trusted leaders, and its evidence names each leader and address contacted; leaders rotate
 * while sending; a transaction over the size limit is refused before it is sent. Leaders that
 * refuse, stall, demand a Retry or give no credit: tpu-leader-faults.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { createTpuUpstream } from '../../src/upstreams/tpu';
import { loadTpuIdentity } from '../../src/upstreams/tpu-identity';
import type { ValidatedTransaction } from '../../src/validation/validate-transaction';
import { makeDataDir, startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc, sendTransaction, submitBatch } from '../helpers/rpc';
import { fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import { startTpuCluster, until, type TpuCluster } from '../helpers/tpu-cluster';
import { exposuresAt, type Exposure } from '../helpers/exposure';

describe('the tpu upstream in front of the local cluster', () => {
  let cluster: TpuCluster;
  let gw: TestGateway;
  let chain: Connection;
  let payer: Keypair;
  let identity: string;
  let policyFile: string;
  const dir = makeDataDir();

  before(async () => {
    cluster = await startTpuCluster({ slotMs: 100 });
    chain = new Connection(cluster.url, 'confirmed');
    payer = await fundedKeypair(chain, 100);
    const keypair = Keypair.generate();
    const keypairFile = path.join(dir, 'identity.json');
    fs.writeFileSync(keypairFile, JSON.stringify([...keypair.secretKey]), { mode: 0o600 });
    identity = keypair.publicKey.toBase58();
    // Trusted: every validator but two, so that protected sends wait for windows without them.
    const validators = cluster.ledger.schedule.identities;
    policyFile = path.join(dir, 'policy.json');
    fs.writeFileSync(policyFile, JSON.stringify({ deny: validators.slice(0, 2) }));
    gw = await startTestGateway(
      { identityKeypair: keypairFile, validatorPolicy: policyFile, policyRefreshMs: 100 },
      { upstreams: { leaders: { type: 'tpu', urls: [cluster.url], slotPollMs: 25 } } },
    );
  });
  after(async () => {
    await gw?.close();
    await cluster?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const exposureOf = async (signature: string): Promise<Exposure> => (await exposuresAt(cluster.url, [signature]))[0]!;
  const send = async (tx: string, antiMev = false) => {
    const answer = await sendTransaction(`${gw.url}/${antiMev ? '?anti_mev=1' : ''}`, gw.key, tx);
    assert.equal(answer.body.error, undefined, JSON.stringify(answer.body));
    return answer.body.result as string;
  };

  it("lands a transfer through the leaders' TPUs, recorded with the configured identity as its sender, seen only by the leaders it went to", async () => {
    const recipient = Keypair.generate().publicKey;
    const signature = await send(await transferTx(chain, payer, recipient, 5_000_000));
    await waitForStatus(chain, signature, 10_000);
    assert.equal(await chain.getBalance(recipient, 'confirmed'), 5_000_000);
    const exposure = await exposureOf(signature);
    assert.equal(exposure.path, 'tpu');
    assert.deepEqual(exposure.tpuSenders, [identity]);
    // Sent to the leaders of two 4-slot windows at most: the landing leader among them.
    assert.ok(exposure.exposedTo.includes(exposure.leader), JSON.stringify(exposure));
    assert.ok(exposure.exposedTo.length <= 3, JSON.stringify(exposure));
  });

  it('lands a batch through the TPU route', async () => {
    const recipients = [0, 1, 2].map(() => Keypair.generate().publicKey);
    const txs = await Promise.all(recipients.map((to, i) => transferTx(chain, payer, to, 1_000_000 + i)));
    const answer = await submitBatch(gw.url, gw.key, txs);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    for (const tx of txs) {
      const signature = bs58.encode(Buffer.from(tx, 'base64').subarray(1, 65));
      await waitForStatus(chain, signature, 10_000);
      assert.equal((await exposureOf(signature)).path, 'tpu');
    }
    assert.deepEqual(await Promise.all(recipients.map((to) => chain.getBalance(to, 'confirmed'))), [1_000_000, 1_000_001, 1_000_002]);
  });

  it('sends a protected transaction only to trusted leaders of its safe window, and names each leader and address contacted', async () => {
    const denied = cluster.ledger.schedule.identities.slice(0, 2);
    const signatures: string[] = [];
    for (let i = 0; i < 4; i++)
      signatures.push(await send(await transferTx(chain, payer, Keypair.generate().publicKey, 2_000_000 + i), true));
    for (const signature of signatures) {
      await waitForStatus(chain, signature, 20_000);
      const exposure = await exposureOf(signature);
      assert.equal(exposure.path, 'tpu');
      for (const validator of exposure.exposedTo)
        assert.ok(!denied.includes(validator), `${validator} is denied by the policy, yet saw ${signature}`);
      const submission = (await rpc(gw.url, gw.key, 'getSubmission', [signature])).body.result.value;
      const evidence = submission.transactions[0].evidence as { contacted?: { leader: string; address: string }[] }[];
      const contacted = evidence.flatMap((send) => send.contacted ?? []);
      assert.ok(contacted.length > 0, JSON.stringify(submission));
      for (const entry of contacted) {
        assert.ok(!denied.includes(entry.leader), `evidence names ${entry.leader}, a denied leader`);
        assert.match(entry.address, /^127\.0\.0\.1:\d+$/);
      }
    }
  });

  it('keeps landing while the leaders rotate', async () => {
    const signatures: string[] = [];
    for (let i = 0; i < 8; i++) {
      signatures.push(await send(await transferTx(chain, payer, Keypair.generate().publicKey, 3_000_000 + i)));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const leaders = new Set<string>();
    for (const signature of signatures) {
      await waitForStatus(chain, signature, 10_000);
      leaders.add((await exposureOf(signature)).leader);
    }
    assert.ok(leaders.size >= 2, `landed with ${[...leaders].join(', ')} only`);
  });

  it('works beside other upstreams: in a route list with an RPC node both get it, and a protected batch goes to the TPUs alone', async () => {
    const beside = await startTestGateway(
      { identityKeypair: path.join(dir, 'identity.json'), validatorPolicy: policyFile, policyRefreshMs: 100 },
      {
        upstreams: {
          leaders: { type: 'tpu', urls: [cluster.url], slotPollMs: 25 },
          rpc: { type: 'rpc', urls: [cluster.url] },
        },
        routes: {
          sendTransaction: ['leaders', 'rpc'],
          submitBatch: ['rpc', 'leaders'],
          sendBundle: [],
          antiMev: ['leaders'],
          reads: 'rpc',
        },
      },
    );
    try {
      const recipient = Keypair.generate().publicKey;
      const answer = await sendTransaction(beside.url, beside.key, await transferTx(chain, payer, recipient, 6_000_000));
      const signature = answer.body.result as string;
      assert.equal(typeof signature, 'string', JSON.stringify(answer.body));
      await waitForStatus(chain, signature, 10_000);
      assert.equal(await chain.getBalance(recipient, 'confirmed'), 6_000_000);
      // Both routes delivered it: the TPUs recorded the gateway's identity as a sender, and the submission names both.
      await until(async () => ((await exposureOf(signature)).tpuSenders ?? []).includes(identity));
      const view = (await rpc(beside.url, beside.key, 'getSubmission', [signature])).body.result.value;
      assert.deepEqual(view.routes, ['leaders', 'rpc']);

      const txs = await Promise.all([1, 2].map((i) => transferTx(chain, payer, Keypair.generate().publicKey, 6_000_000 + i)));
      const batch = await submitBatch(beside.url, beside.key, txs, [], '?anti_mev=1');
      assert.equal(batch.status, 200, JSON.stringify(batch.body));
      for (const signature of batch.body.signatures as string[]) {
        await waitForStatus(chain, signature, 20_000);
        const exposure = await exposureOf(signature);
        assert.equal(exposure.path, 'tpu', JSON.stringify(exposure));
        assert.deepEqual(exposure.tpuSenders, [identity]);
      }
    } finally {
      await beside.close();
    }
  });

  it('refuses a transaction longer than maxTransactionBytes before sending it, saying so', async () => {
    const upstream = createTpuUpstream({
      name: 'leaders',
      urls: [cluster.url],
      timeoutMs: 2_000,
      maxAnswerBytes: 1 << 20,
      identity: loadTpuIdentity(''),
      leaderWindows: 2,
      maxConnections: 4,
      maxTransactionBytes: 1232,
      slotPollMs: 50,
    });
    try {
      const tx = { wire: { bytes: Buffer.alloc(1300) } } as unknown as ValidatedTransaction;
      await assert.rejects(
        upstream.sendTransaction(tx, { skipPreflight: true, preflightCommitment: 'processed', maxRetries: 0, minContextSlot: undefined }),
        { message: 'tpu upstream leaders: the transaction is 1300 bytes; a TPU takes at most 1232 (maxTransactionBytes)' },
      );
    } finally {
      await upstream.close();
    }
  });
});
