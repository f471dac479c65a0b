import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import bs58 from 'bs58';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { computeBundleId } from '../../src/core/bundle-id';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { post, rpc, submitBatch } from '../helpers/rpc';
import { balanceOf, connect, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const TIMEOUT_MS = 300;
let cluster: Cluster;
let gw: TestGateway;
let connection: Connection;

before(async () => {
  cluster = await startCluster(3);
  const [a, b, engine] = cluster.nodes;
  gw = await startTestGateway(
    {},
    {
      upstreams: {
        rpc: { type: 'rpc', urls: [a!.url, b!.url] },
        jito: { type: 'jito', urls: [`${engine!.url}/api/v1`] },
      },
      requestTimeoutMs: TIMEOUT_MS,
      rebroadcast: { intervalMs: 100, maxAttempts: 1000, queueCapacity: 1000 },
    },
  );
  connection = connect(gw.url, gw.key);
});
after(async () => {
  await gw.close();
  await cluster.close();
});
beforeEach(() => {
  for (const node of cluster.nodes) {
    node.fault('none');
    node.calls.length = 0;
  }
});

/** The journaled state of a transaction, or of a bundle's first transaction, after a tracking round. */
const stateOf = async (signatureOrBundleId: string) => {
  await gw.app.tracker.runRound();
  const entry = (await gw.app.journal.find(signatureOrBundleId))[0]!;
  return entry.transactions.find((tx) => tx.signature === signatureOrBundleId) ?? entry.transactions[0]!;
};
const sends = (node: number, path = 'rpc') =>
  cluster.nodes[node]!.calls.filter((c) => c.method === 'sendTransaction' && c.path === path).length;

/** A transfer that also tips the block engine its documented minimum (the tip accounts exist from genesis). */
async function tippedBundle(payer: Keypair, to: PublicKey, lamports: number, tip = 1_000): Promise<string> {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: (await connection.getLatestBlockhash()).blockhash }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }),
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(JITO_TIP_ACCOUNTS[0]!), lamports: tip }),
  );
  tx.sign(payer);
  return tx.serialize().toString('base64');
}

describe('through Solana RPC nodes', () => {
  it('sends a transaction to every node, it lands, and the journal says landed', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const signature = await connection.sendRawTransaction(
      Buffer.from(await transferTx(connection, alice, bob.publicKey, LAMPORTS_PER_SOL), 'base64'),
    );
    await waitForStatus(connection, signature);
    assert.equal(await balanceOf(connection, bob.publicKey), LAMPORTS_PER_SOL);
    assert.equal(sends(0), 1);
    assert.equal(sends(1), 1);
    const journaled = await stateOf(signature);
    assert.equal(journaled.state, 'landed');
    assert.equal(typeof journaled.slot, 'number');
  });

  it('a batch: members execute independently; the journal says landed, failed, landed', async () => {
    const alice = await fundedKeypair(connection);
    const carol = await fundedKeypair(connection, 1);
    const bob = Keypair.generate();
    const answer = await submitBatch(gw.url, gw.key, [
      await transferTx(connection, alice, bob.publicKey, 1_000_000),
      await failingTransferTx(connection, carol, bob.publicKey),
      await transferTx(connection, alice, bob.publicKey, 2_000_000),
    ]);
    assert.equal(answer.body.code, 1);
    for (const signature of answer.body.signatures) await waitForStatus(connection, signature);
    assert.equal(await balanceOf(connection, bob.publicKey), 3_000_000);
    const states = await Promise.all(answer.body.signatures.map(async (s: string) => (await stateOf(s)).state));
    assert.deepEqual(states, ['landed', 'failed', 'landed']);
    assert.match((await stateOf(answer.body.signatures[1])).reason!, /custom program error: 0x1/);
    const view = (await rpc(gw.url, gw.key, 'getSubmissionStatuses', [answer.body.signatures])).body.result.value;
    assert.deepEqual(
      view.map((v: { state: string; kind: string }) => [v.kind, v.state]),
      [
        ['batch member', 'landed'],
        ['batch member', 'failed'],
        ['batch member', 'landed'],
      ],
    );
    assert.equal(view[1].reason, 'Error processing Instruction 0: custom program error: 0x1');
    assert.deepEqual(view[1].routes, ['rpc']);
    const other = (await rpc(gw.url, gw.plainKey, 'getSubmissionStatuses', [answer.body.signatures])).body.result.value;
    assert.deepEqual(other, [null, null, null], "another key's submissions are not shown");
  });

  it('proxies reads, so a whole Connection can point at Slipway', async () => {
    const { value } = await connection.getLatestBlockhash().then((r) => ({ value: r }));
    assert.equal(typeof value.blockhash, 'string');
    assert.equal((await rpc(gw.url, gw.key, 'getVersion')).body.result['solana-core'], '2.3.0');
    assert.ok(cluster.nodes.slice(0, 2).some((n) => n.calls.some((c) => c.method === 'getVersion')));
  });
});

describe('through a Jito block engine', () => {
  it('lands a tipped bundle atomically, checked by balances', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const answer = await rpc(gw.url, gw.key, 'sendBundle', [[await tippedBundle(alice, bob.publicKey, 3_000_000)], { encoding: 'base64' }]);
    assert.match(answer.body.result, /^[0-9a-f]{64}$/);
    assert.equal(await balanceOf(connection, bob.publicKey), 3_000_000);
    assert.equal(cluster.nodes[2]!.calls.filter((c) => c.method === 'sendBundle').length, 1);
    const journaled = await stateOf(answer.body.result);
    assert.equal(journaled.state, 'landed');
  });

  it('refuses a bundle without a tip before sending it', async () => {
    const alice = await fundedKeypair(connection);
    const answer = await rpc(gw.url, gw.key, 'sendBundle', [
      [await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000)],
      { encoding: 'base64' },
    ]);
    assert.equal(answer.body.error.code, -32093);
    assert.match(answer.body.error.message, /jito does not take this bundle: the bundle tips 0 lamports .* at least 1000 are needed/);
    assert.equal(cluster.nodes[2]!.calls.filter((c) => c.method === 'sendBundle').length, 0);
  });

  it('simulates a bundle first and refuses one that would fail at once, naming the transaction, its error and logs; nothing is sent', async () => {
    const alice = await fundedKeypair(connection);
    const carol = await fundedKeypair(connection, 1);
    const bob = Keypair.generate();
    const failing = await failingTransferTx(connection, carol, bob.publicKey);
    const answer = await rpc(gw.url, gw.key, 'sendBundle', [
      [await tippedBundle(alice, bob.publicKey, 1_000_000), failing],
      { encoding: 'base64' },
    ]);
    const signature = bs58.encode(Buffer.from(failing, 'base64').subarray(1, 65));
    assert.equal(answer.body.error?.code, -32090, JSON.stringify(answer.body));
    assert.match(
      answer.body.error.message,
      new RegExp(
        `^Bundle refused before sending: in its simulation, transaction 2 of 2 \\(${signature}\\) failed: Error processing Instruction 0: custom program error: 0x1; nothing was sent$`,
      ),
    );
    const data = answer.body.error.data;
    assert.deepEqual([data.failedTransactionIndex, data.err, data.simulated], [1, { InstructionError: [0, { Custom: 1 }] }, true]);
    assert.ok(
      data.logs.some((line: string) => /insufficient lamports/.test(line)),
      JSON.stringify(data.logs),
    );
    assert.equal(cluster.nodes[2]!.calls.filter((c) => c.method === 'sendBundle').length, 0, 'the block engine got nothing');
    assert.equal(await balanceOf(connection, bob.publicKey), 0);
    // The same bundle without its failing member goes through.
    const good = await rpc(gw.url, gw.key, 'sendBundle', [[await tippedBundle(alice, bob.publicKey, 1_000_000)], { encoding: 'base64' }]);
    assert.match(good.body.result, /^[0-9a-f]{64}$/, JSON.stringify(good.body));
  });

  it('with simulateBundles off: sends it, and records why a bundle the engine took did not land', async () => {
    const [, , engine] = cluster.nodes;
    const late = await startTestGateway(
      { simulateBundles: 'false' },
      {
        upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] }, jito: { type: 'jito', urls: [`${engine!.url}/api/v1`] } },
        requestTimeoutMs: TIMEOUT_MS,
      },
    );
    try {
      const alice = await fundedKeypair(connection);
      const carol = await fundedKeypair(connection, 1);
      const bob = Keypair.generate();
      const answer = await rpc(late.url, late.key, 'sendBundle', [
        [await tippedBundle(alice, bob.publicKey, 1_000_000), await failingTransferTx(connection, carol, bob.publicKey)],
        { encoding: 'base64' },
      ]);
      assert.match(answer.body.result, /^[0-9a-f]{64}$/, 'the engine answers the ID; the outcome comes later');
      await late.app.tracker.runRound();
      const journaled = (await late.app.journal.find(answer.body.result))[0]!.transactions[0]!;
      assert.equal(journaled.state, 'rejected');
      assert.match(journaled.reason!, /^the bundle did not land: transaction 2 of 2 .* custom program error: 0x1$/);
      assert.equal(await balanceOf(connection, bob.publicKey), 0);
      const inflight = (await rpc(late.url, late.key, 'getInflightBundleStatuses', [[answer.body.result]])).body.result.value[0];
      assert.equal(inflight.status, 'Failed');
      assert.equal(inflight.err, journaled.reason);
      const view = (await rpc(late.url, late.key, 'getSubmissionStatuses', [[answer.body.result]])).body.result.value[0];
      assert.deepEqual([view.kind, view.state, view.reason], ['bundle', 'rejected', journaled.reason]);
    } finally {
      await late.close();
    }
  });
});

describe('status view', () => {
  it('says why a signature was refused at validation', async () => {
    const alice = await fundedKeypair(connection);
    const forged = Buffer.from(await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000), 'base64');
    forged[forged.length - 1]! ^= 1;
    const refused = await rpc(gw.url, gw.key, 'sendTransaction', [forged.toString('base64'), { encoding: 'base64' }]);
    assert.equal(refused.body.error.code, -32003);
    const signature = bs58.encode(forged.subarray(1, 65));
    const view = (await rpc(gw.url, gw.key, 'getSubmissionStatuses', [[signature]])).body.result.value[0];
    assert.equal(view.state, 'rejected');
    assert.match(view.reason, /^refused: Transaction signature verification failure/);
    const unknown = (
      await rpc(gw.url, gw.key, 'getSubmissionStatuses', [['1111111111111111111111111111111111111111111111111111111111111111']])
    ).body.result.value;
    assert.deepEqual(unknown, [null]);
    const bad = await rpc(gw.url, gw.key, 'getSubmissionStatuses', ['nope']);
    assert.equal(bad.body.error.code, -32602);
  });
});

describe('anti-MEV traffic', () => {
  it('goes only to the protected route (the block engine), never to the RPC nodes', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = await transferTx(connection, alice, bob.publicKey, 4_000_000);
    for (const node of cluster.nodes) node.calls.length = 0;
    const answer = await post(
      `${gw.url}/?anti_mev=1`,
      { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
      { 'x-api-key': gw.key },
    );
    await waitForStatus(connection, answer.body.result);
    assert.equal(await balanceOf(connection, bob.publicKey), 4_000_000);
    await gw.app.tracker.runRound();
    assert.equal(sends(0) + sends(1), 0, 'no RPC node saw it sent');
    assert.ok(sends(2, 'transactions') >= 1, 'the block engine did');
    const batch = await submitBatch(gw.url, gw.key, [await transferTx(connection, alice, bob.publicKey, 1_000_000)], [], '?anti_mev=1');
    await waitForStatus(connection, batch.body.signatures[0]);
    assert.equal(sends(0) + sends(1), 0);
  });

  it('a protected transaction that pays its own tip goes to the block engine as a bundle of one (bundleOnly); one without a tip goes plain', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const send = async (tx: string) =>
      (
        await post(
          `${gw.url}/?anti_mev=1`,
          { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
          { 'x-api-key': gw.key },
        )
      ).body.result as string;
    const tipped = await send(await tippedBundle(alice, bob.publicKey, 1_000_000));
    const plain = await send(await transferTx(connection, alice, bob.publicKey, 2_000_000));
    await waitForStatus(connection, tipped);
    await waitForStatus(connection, plain);
    assert.equal(await balanceOf(connection, bob.publicKey), 3_000_000);
    assert.equal(cluster.ledger.getBundle(computeBundleId([tipped]))?.landed, true);
    assert.equal(cluster.ledger.getBundle(computeBundleId([plain])), undefined);
  });
});

describe('faults', () => {
  for (const mode of ['refuse', 'error', 'hang'] as const) {
    it(`one RPC node that ${mode}s: every submission still lands, within the timeouts`, async () => {
      const alice = await fundedKeypair(connection);
      cluster.nodes[0]!.fault(mode);
      const recipients = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
      for (const [i, bob] of recipients.entries()) {
        const started = Date.now();
        const answer = await rpc(gw.url, gw.key, 'sendTransaction', [
          await transferTx(connection, alice, bob.publicKey, 1_000_000 + i),
          { encoding: 'base64' },
        ]);
        assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
        assert.ok(Date.now() - started < 3 * TIMEOUT_MS + 500, `answered in ${Date.now() - started} ms`);
        await waitForStatus(connection, answer.body.result);
      }
      for (const [i, bob] of recipients.entries()) assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000 + i);
    });
  }

  it('two RPC upstreams, the first hanging: every submission still lands, within the timeouts', async () => {
    const two = await startTestGateway(
      {},
      {
        upstreams: { first: { type: 'rpc', urls: [cluster.nodes[0]!.url] }, second: { type: 'rpc', urls: [cluster.nodes[1]!.url] } },
        routes: { sendTransaction: ['first', 'second'], submitBatch: ['first', 'second'], reads: 'second' },
        requestTimeoutMs: TIMEOUT_MS,
      },
    );
    try {
      const c = connect(two.url, two.key);
      const alice = await fundedKeypair(c);
      cluster.nodes[0]!.fault('hang');
      const bob = Keypair.generate();
      const started = Date.now();
      const answer = await rpc(two.url, two.key, 'sendTransaction', [
        await transferTx(c, alice, bob.publicKey, 1_000_000),
        { encoding: 'base64' },
      ]);
      assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
      assert.ok(Date.now() - started < 3 * TIMEOUT_MS + 500, `answered in ${Date.now() - started} ms`);
      const batch = await submitBatch(two.url, two.key, [await transferTx(c, alice, bob.publicKey, 2_000_000)]);
      assert.equal(batch.body.code, 1);
      await waitForStatus(c, batch.body.signatures[0]);
      assert.equal(await balanceOf(c, bob.publicKey), 3_000_000);
    } finally {
      cluster.nodes[0]!.fault('none');
      await two.close();
    }
  });

  it('every RPC node down: a clear JSON-RPC error, and the journal says rejected', async () => {
    const alice = await fundedKeypair(connection);
    const tx = await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000);
    cluster.nodes[0]!.fault('refuse');
    cluster.nodes[1]!.fault('error');
    const preflight = await rpc(gw.url, gw.key, 'sendTransaction', [tx, { encoding: 'base64' }]);
    assert.equal(preflight.body.error.code, -32091);
    assert.match(
      preflight.body.error.message,
      /^the preflight simulation could not run: rpc: every endpoint failed: http:\/\/127\.0\.0\.1:\d+: (connection reset|HTTP 503)/,
    );
    const answer = await rpc(gw.url, gw.key, 'sendTransaction', [tx, { encoding: 'base64', skipPreflight: true }]);
    assert.equal(answer.body.error.code, -32091);
    assert.match(answer.body.error.message, /^no upstream took the transaction: rpc: no RPC node took the transaction: /);
    const signature = Transaction.from(Buffer.from(tx, 'base64')).signature!;
    const entry = (await gw.app.journal.find(bs58.encode(signature)))[0]!;
    assert.equal(entry.transactions[0]!.state, 'rejected');
    assert.match(entry.transactions[0]!.reason!, /^no upstream took it: /);
  });

  it('the block engine down: a clear error for bundles', async () => {
    const alice = await fundedKeypair(connection);
    await rpc(gw.url, gw.key, 'sendBundle', [[await tippedBundle(alice, Keypair.generate().publicKey, 1_000_000)], { encoding: 'base64' }]);
    cluster.nodes[2]!.fault('refuse');
    const answer = await rpc(gw.url, gw.key, 'sendBundle', [
      [await tippedBundle(alice, Keypair.generate().publicKey, 2_000_000)],
      { encoding: 'base64' },
    ]);
    assert.equal(answer.body.error.code, -32091);
    assert.match(answer.body.error.message, /^no upstream took the bundle: jito: no block engine took the bundle: .*connection reset/);
  });
});

describe('expiry', () => {
  it('a transaction whose blockhash expires is marked expired and its rebroadcast stops', async () => {
    const fast = await startCluster(1, 5);
    const other = await startTestGateway(
      {},
      {
        upstreams: { rpc: { type: 'rpc', urls: [fast.nodes[0]!.url] } },
        requestTimeoutMs: TIMEOUT_MS,
        rebroadcast: { intervalMs: 50, maxAttempts: 10_000, queueCapacity: 100 },
      },
    );
    try {
      const c = connect(other.url, other.key);
      const alice = await fundedKeypair(c);
      fast.nodes[0]!.fault('drop');
      const answer = await rpc(other.url, other.key, 'sendTransaction', [
        await transferTx(c, alice, Keypair.generate().publicKey, 1_000_000),
        { encoding: 'base64' },
      ]);
      const signature = answer.body.result as string;
      let state = 'forwarded';
      const started = Date.now();
      while (state !== 'expired' && Date.now() - started < 15_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        state = (await other.app.journal.find(signature))[0]!.transactions[0]!.state;
      }
      const entry = (await other.app.journal.find(signature))[0]!.transactions[0]!;
      assert.equal(entry.state, 'expired');
      assert.equal(entry.reason, 'its blockhash expired before it landed');
      assert.ok(entry.attempts > 3, `rebroadcast ${entry.attempts} times meanwhile`);
      const sendsAtExpiry = fast.nodes[0]!.calls.filter((c) => c.method === 'sendTransaction').length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(fast.nodes[0]!.calls.filter((c) => c.method === 'sendTransaction').length, sendsAtExpiry, 'no send after expiry');
      assert.equal(other.app.tracker.size, 0);
      const view = (await rpc(other.url, other.key, 'getSubmissionStatuses', [[signature]])).body.result.value[0];
      assert.deepEqual([view.state, view.reason], ['expired', 'its blockhash expired before it landed']);
    } finally {
      await other.close();
      await fast.close();
    }
  });
});

describe('rebroadcast queue', () => {
  it('is bounded: when full, the most-retried transactions are shed and counted', async () => {
    const { register } = await import('prom-client');
    const shedCount = async () => (await register.getSingleMetric('slipway_rebroadcast_shed_total')!.get()).values[0]?.value ?? 0;
    const small = await startTestGateway(
      {},
      {
        upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } },
        requestTimeoutMs: TIMEOUT_MS,
        rebroadcast: { intervalMs: 60_000, maxAttempts: 1000, queueCapacity: 3 },
      },
    );
    try {
      const c = connect(small.url, small.key);
      const alice = await fundedKeypair(c);
      cluster.nodes[0]!.fault('drop');
      const before = await shedCount();
      for (let i = 0; i < 5; i++) {
        const answer = await rpc(small.url, small.key, 'sendTransaction', [
          await transferTx(c, alice, Keypair.generate().publicKey, 1_000_000 + i),
          { encoding: 'base64' },
        ]);
        assert.equal(typeof answer.body.result, 'string');
      }
      assert.ok(small.app.tracker.size <= 3, `tracking ${small.app.tracker.size}`);
      assert.equal((await shedCount()) - before, 2);
    } finally {
      cluster.nodes[0]!.fault('none');
      await small.close();
    }
  });
});

describe('configuration', () => {
  it('stops start-up on a configuration that breaks a promise, naming the field', async () => {
    await assert.rejects(
      startTestGateway({}, { upstreams: { rpc: { type: 'rpc', urls: ['http://127.0.0.1:1'] } }, routes: { sendBundle: ['rpc'] } }),
      /routes\.sendBundle\[0\]: upstream "rpc" is a Solana RPC node, which cannot execute bundles atomically/,
    );
    await assert.rejects(
      startTestGateway({}, { upstreams: { leaders: { type: 'tpu', urls: ['http://127.0.0.1:1'] } }, routes: { sendBundle: ['leaders'] } }),
      /routes\.sendBundle\[0\]: upstream "leaders" sends to leaders' TPUs one transaction at a time, which cannot land a bundle atomically; route sendBundle to a jito or embedded upstream/,
    );
    await assert.rejects(
      startTestGateway({}, { upstreams: { rpc: { type: 'rpc', urls: ['nope'] } } }),
      /upstreams\.rpc\.urls\.0: must be an http:\/\/ or https:\/\/ URL/,
    );
    await assert.rejects(startTestGateway({}, { requestTimeout: 5 }), /\(top level\): Unrecognized key: "requestTimeout"/);
  });

  it('refuses anti_mev=1 clearly when no protected upstream is configured', async () => {
    const plain = await startTestGateway({}, { upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } } });
    try {
      const answer = await post(
        `${plain.url}/?anti_mev=1`,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: ['AAAA', { encoding: 'base64' }] },
        { 'x-api-key': plain.key },
      );
      assert.equal(answer.body.error.code, -32602, 'validation comes first');
      const alice = await fundedKeypair(connect(plain.url, plain.key));
      const tx = await transferTx(connect(plain.url, plain.key), alice, Keypair.generate().publicKey, 1_000_000);
      const refused = await post(
        `${plain.url}/?anti_mev=1`,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
        { 'x-api-key': plain.key },
      );
      assert.deepEqual(refused.body.error, {
        code: -32092,
        message: 'anti_mev=1 is not available on this gateway: no protected upstream is configured',
      });
      const bundle = await rpc(plain.url, plain.key, 'sendBundle', [[tx], { encoding: 'base64' }]);
      assert.deepEqual(bundle.body.error, {
        code: -32092,
        message: 'sendBundle is not available on this gateway: no upstream is configured for it',
      });
    } finally {
      await plain.close();
    }
  });
});
