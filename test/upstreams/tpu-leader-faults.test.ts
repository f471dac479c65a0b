/**
 * The TPU route when leaders misbehave, over real QUIC sockets against the local cluster's
 * TPUs (faults injected through its `/_faults`): a leader that refuses handshakes, stalls,
 * gives no stream credit, or demands a Retry. In each case the other leader of the window
 * still gets the transaction and it lands; a refusing or stalled (nothing acknowledged for
 * 2 s) leader is counted failed and backed off, a starving one keeps its connection and is given what waited once credit
 * comes back. Through a gateway, leaders that take transactions and never execute them are
 * sent them again by the rebroadcast until they land.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair } from '@solana/web3.js';
import { createTpuUpstream, type TpuUpstream } from '../../src/upstreams/tpu';
import { loadTpuIdentity } from '../../src/upstreams/tpu-identity';
import type { SendOptions, SendOutcome } from '../../src/upstreams/upstream';
import { restoreValidatedTransaction, type ValidatedTransaction } from '../../src/validation/validate-transaction';
import { startTestGateway } from '../helpers/gateway';
import { post, rpc, sendTransaction } from '../helpers/rpc';
import { fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import { startTpuCluster, until, type TpuCluster } from '../helpers/tpu-cluster';

const SEND: SendOptions = { skipPreflight: true, preflightCommitment: 'processed', maxRetries: 0, minContextSlot: undefined };

describe('the tpu upstream when leaders misbehave', () => {
  let cluster: TpuCluster;
  let chain: Connection;
  let payer: Keypair;
  let lamports = 4_000_000;

  before(async () => {
    cluster = await startTpuCluster({ slotMs: 100 });
    chain = new Connection(cluster.url, 'confirmed');
    payer = await fundedKeypair(chain, 100);
  });
  after(async () => {
    await cluster?.close();
  });

  const setTpuFault = async (tpu: unknown) => {
    const answer = await post(`${cluster.url}/_faults`, { tpu });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  };
  const transfer = async () =>
    restoreValidatedTransaction(Buffer.from(await transferTx(chain, payer, Keypair.generate().publicKey, lamports++), 'base64'));
  const fresh = () =>
    createTpuUpstream({
      name: 'fresh',
      urls: [cluster.url],
      timeoutMs: 2_000,
      maxAnswerBytes: 1 << 20,
      identity: loadTpuIdentity(''),
      leaderWindows: 2,
      maxConnections: 8,
      maxTransactionBytes: 1232,
      slotPollMs: 25,
    });
  const leaderOf = async (signature: string): Promise<string> => {
    const answer = await post(cluster.url, { jsonrpc: '2.0', id: 1, method: 'getTransactionExposure', params: [[signature]] });
    return answer.body.result.value[0].leader as string;
  };

  /**
   * Tells a leader of a later window that `upstream` has no connection to yet (the faults act
   * on what comes next) to misbehave, and sends a transfer. With 100 ms slots the windows can
   * move between choosing and sending on a loaded machine: tries again until the send went to
   * that leader and to another one, and the transfer has landed.
   */
  async function sendPastFaultyLeader(upstream: TpuUpstream, mode: string) {
    for (let attempt = 0; attempt < 10; attempt++) {
      const tx = await transfer();
      const unconnected = () => {
        const targets = upstream.targets();
        if (typeof targets === 'string' || targets.length < 2 || targets.some((target) => target.address === null)) return undefined;
        const known = new Set(upstream.leaderHealth().map((health) => health.leader));
        return targets.slice(1).find((target) => !known.has(target.leader))?.leader;
      };
      let faulty = unconnected();
      while (faulty === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        faulty = unconnected();
      }
      await setTpuFault({ mode, validator: faulty });
      const outcome: SendOutcome = await upstream.sendTransaction(tx, SEND);
      await waitForStatus(chain, tx.signature, 10_000);
      const contacted = (outcome.contacted ?? []).map((entry) => entry.leader);
      if (contacted.includes(faulty) && contacted.length >= 2) return { faulty, tx };
      await setTpuFault({ mode: 'none' });
    }
    throw new Error(`the leader told to ${mode} was never among the leaders sent to`);
  }
  const healthOf = (upstream: TpuUpstream, leader: string) => upstream.leaderHealth().find((health) => health.leader === leader);

  it('a leader that refuses handshakes is counted failed and backed off, with the reason; the other leader takes it and it lands', async () => {
    const upstream = fresh();
    try {
      const { faulty, tx } = await sendPastFaultyLeader(upstream, 'refuse');
      assert.notEqual(await leaderOf(tx.signature), faulty);
      // The first back-off is 250 ms: the failure count and its reason stay after it.
      await until(() => (healthOf(upstream, faulty)?.failures ?? 0) > 0);
      assert.equal(healthOf(upstream, faulty)!.failures, 1);
      assert.match(healthOf(upstream, faulty)!.lastError ?? '', /closed by the leader/);
    } finally {
      await setTpuFault({ mode: 'none' });
      await upstream.close();
    }
  });

  it('a leader that gives no stream credit keeps its connection, and is given what waited once credit comes back; the other leader takes it and it lands', async () => {
    const upstream = fresh();
    try {
      const { faulty, tx } = await sendPastFaultyLeader(upstream, 'starve');
      assert.notEqual(await leaderOf(tx.signature), faulty);
      await until(() => healthOf(upstream, faulty)?.state === 'connected');
      const starved = healthOf(upstream, faulty)!;
      assert.deepEqual([starved.sent, starved.delivered, starved.failures], [1, 0, 0], JSON.stringify(starved));
      await setTpuFault({ mode: 'none' });
      await until(() => healthOf(upstream, faulty)?.delivered === 1);
      assert.deepEqual([healthOf(upstream, faulty)!.state, healthOf(upstream, faulty)!.failures], ['connected', 0]);
    } finally {
      await setTpuFault({ mode: 'none' });
      await upstream.close();
    }
  });

  it('a stalled leader: the other leader takes it and it lands; the stalled connection idles out, counted failed and backed off', async () => {
    const upstream = fresh();
    try {
      const { faulty, tx } = await sendPastFaultyLeader(upstream, 'stall');
      assert.notEqual(await leaderOf(tx.signature), faulty);
      assert.equal(healthOf(upstream, faulty)!.delivered, 0);
      // Its own probes still arrive (so the 10 s idle time-out would not end it), but nothing
      // of ours is acknowledged: after 2 s it is closed as stalled.
      await until(() => (healthOf(upstream, faulty)?.failures ?? 0) > 0, 5_000);
      assert.equal(healthOf(upstream, faulty)!.delivered, 0);
      assert.match(healthOf(upstream, faulty)!.lastError ?? '', /^no answer \(stalled: nothing acknowledged for \d+ ms\)$/);
    } finally {
      await setTpuFault({ mode: 'none' });
      await upstream.close();
    }
  });

  it('leaders that answer with a Retry are connected through it, and the transaction lands', async () => {
    const upstream = fresh();
    await setTpuFault({ mode: 'retry' });
    try {
      await until(() => typeof upstream.targets() !== 'string');
      const tx: ValidatedTransaction = await transfer();
      const outcome = await upstream.sendTransaction(tx, SEND);
      assert.ok((outcome.contacted ?? []).length >= 1, JSON.stringify(outcome));
      await waitForStatus(chain, tx.signature, 10_000);
      await until(() => upstream.leaderHealth().some((health) => health.delivered > 0));
      assert.deepEqual(
        upstream.leaderHealth().filter((health) => health.failures > 0),
        [],
      );
    } finally {
      await setTpuFault({ mode: 'none' });
      await upstream.close();
    }
  });

  it('through a gateway: leaders that take a transaction and never execute it are sent it again until it lands', async () => {
    const gw = await startTestGateway(
      {},
      {
        upstreams: { leaders: { type: 'tpu', urls: [cluster.url], slotPollMs: 25 } },
        rebroadcast: { intervalMs: 200, maxAttempts: 1000, queueCapacity: 1000 },
      },
    );
    const recipient = Keypair.generate().publicKey;
    try {
      await setTpuFault({ mode: 'drop' });
      const answer = await sendTransaction(gw.url, gw.key, await transferTx(chain, payer, recipient, 3_000_000));
      const signature = answer.body.result as string;
      assert.equal(typeof signature, 'string', JSON.stringify(answer.body));
      const sends = async () => (await rpc(gw.url, gw.key, 'getSubmission', [signature])).body.result.value.transactions[0].sends as number;
      await until(async () => (await sends()) >= 4, 10_000);
      assert.deepEqual((await chain.getSignatureStatuses([signature])).value, [null]);
      await setTpuFault({ mode: 'none' });
      await waitForStatus(chain, signature, 10_000);
      assert.equal(await chain.getBalance(recipient, 'confirmed'), 3_000_000);
    } finally {
      await setTpuFault({ mode: 'none' });
      await gw.close();
    }
  });
});
