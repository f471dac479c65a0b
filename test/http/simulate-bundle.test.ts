/**
 * The gateway's `simulateBundle` on `/` and `/api/v1/bundles`: on the embedded ledger it
 * really executes (nothing committed); in front of the local cluster it is forwarded to the
 * RPC node (block engines do not simulate); without a simulator it is refused saying so; a
 * key without the bundle permission is refused; bad requests are refused at the edge.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { post } from '../helpers/rpc';
import { fundedKeypair } from '../helpers/solana';
import { useFundedGateway } from '../helpers/use-gateway';

describe('simulateBundle through the gateway', () => {
  const ctx = useFundedGateway();

  const transfer = async (connection: Connection, from: Keypair, to: PublicKey, lamports: number) => {
    const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: (await connection.getLatestBlockhash()).blockhash }).add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }),
    );
    tx.sign(from);
    return tx.serialize().toString('base64');
  };
  const simulate = (url: string, key: string, params: unknown[]) =>
    post(url, { jsonrpc: '2.0', id: 1, method: 'simulateBundle', params }, { 'x-api-key': key });

  it('executes on the embedded ledger, on / and /api/v1/bundles alike, names the failing transaction, and commits nothing', async () => {
    const poor = Keypair.generate();
    const recipient = Keypair.generate().publicKey;
    const txs = [
      await transfer(ctx.connection, ctx.payer, poor.publicKey, 1_000_000),
      await transfer(ctx.connection, ctx.payer, recipient, LAMPORTS_PER_SOL),
      await transfer(ctx.connection, poor, recipient, 5_000_000),
    ];
    for (const path of ['', '/api/v1/bundles']) {
      const answer = await simulate(`${ctx.gw.url}${path}`, ctx.gw.key, [{ encodedTransactions: txs }]);
      assert.equal(answer.status, 200);
      const failing = bs58.encode(Buffer.from(txs[2]!, 'base64').subarray(1, 65));
      assert.equal(answer.body.result.value.summary.failed.tx_signature, failing, JSON.stringify(answer.body));
      assert.deepEqual(
        answer.body.result.value.transactionResults.map((result: { err: unknown }) => result.err),
        [null, null, { InstructionError: [0, { Custom: 1 }] }],
      );
      assert.ok(
        (answer.body.result.value.transactionResults[2].logs as string[]).some((line) => /custom program error: 0x1|failed/.test(line)),
        "the failing transaction's logs are given",
      );
    }
    // Sent as a bundle, the same transactions are refused naming the same transaction and error, and nothing lands.
    const failing = bs58.encode(Buffer.from(txs[2]!, 'base64').subarray(1, 65));
    const sent = await post(
      ctx.gw.url,
      { jsonrpc: '2.0', id: 1, method: 'sendBundle', params: [txs, { encoding: 'base64' }] },
      { 'x-api-key': ctx.gw.key },
    );
    assert.equal(sent.body.error?.code, -32090, JSON.stringify(sent.body));
    assert.equal(sent.body.error.data.failedTransactionIndex, 2);
    assert.ok(sent.body.error.message.includes(`transaction 3 of 3 (${failing}) failed`), sent.body.error.message);
    const good = await simulate(ctx.gw.url, ctx.gw.key, [{ encodedTransactions: txs.slice(0, 2) }]);
    assert.equal(good.body.result.value.summary, 'succeeded');
    assert.equal(await ctx.connection.getBalance(recipient, 'processed'), 0);
    assert.equal(await ctx.connection.getBalance(poor.publicKey, 'processed'), 0);
  });

  it('refuses a key without the bundle permission (403), and bad requests at the edge, saying what is wrong', async () => {
    const tx = await transfer(ctx.connection, ctx.payer, Keypair.generate().publicKey, 1_000_000);
    const forbidden = await simulate(ctx.gw.url, ctx.gw.plainKey, [{ encodedTransactions: [tx] }]);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, -32099);
    assert.match(forbidden.body.error.message, /may not call simulateBundle: bundles are enabled per key/);
    const cases: [unknown[], RegExp][] = [
      [[{ encodedTransactions: 'x' }], /non-empty array of transactions/],
      [[{ encodedTransactions: [tx, tx] }], /contains transaction \w+ twice/],
      // Counted from 1, as sendBundle counts.
      [[{ encodedTransactions: [tx, tx.slice(0, 40)] }], /^transaction 2 \(params\[0\]\.encodedTransactions\[1\]\)/],
      [[{ encodedTransactions: [tx] }, {}, {}], /^simulateBundle takes at most 2 params .*; got 3$/],
      [[{ encodedTransactions: [tx], extra: 1 }], /^params\[0\] has an unknown field "extra": it takes encodedTransactions only$/],
      [
        [{ encodedTransactions: [tx] }, { skipSigVerfy: true }],
        /^params\[1\] has an unknown field "skipSigVerfy": it takes preExecutionAccountsConfigs, /,
      ],
      [[{ encodedTransactions: [tx] }, { preExecutionAccountsConfigs: [{ addresses: [1] }] }], /addresses\[0\] is not a base58 address/],
    ];
    for (const [params, message] of cases) {
      const answer = await simulate(ctx.gw.url, ctx.gw.key, params);
      assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
      assert.match(answer.body.error.message, message);
    }
  });

  describe('in front of the local cluster', () => {
    let cluster: Cluster;
    let front: TestGateway;
    let sinkOnly: TestGateway;

    before(async () => {
      cluster = await startCluster(1);
      const node = cluster.nodes[0]!.url;
      front = await startTestGateway(
        {},
        {
          upstreams: { engine: { type: 'jito', urls: [`${node}/api/v1`] }, rpc: { type: 'rpc', urls: [node] } },
          routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'rpc' },
        },
      );
      sinkOnly = await startTestGateway({ upstream: 'sink' });
    });
    after(async () => {
      await front?.close();
      await sinkOnly?.close();
      await cluster?.close();
    });

    it('is forwarded past the block engine, which does not simulate, to the RPC node, which does', async () => {
      const node = new Connection(cluster.nodes[0]!.url, 'confirmed');
      const funded = await fundedKeypair(node, 5);
      const recipient = Keypair.generate().publicKey;
      const answer = await simulate(front.url, front.key, [
        { encodedTransactions: [await transfer(node, funded, recipient, 2_000_000)] },
        { postExecutionAccountsConfigs: [{ addresses: [recipient.toBase58()], encoding: 'base64' }] },
      ]);
      assert.equal(answer.body.result.value.summary, 'succeeded', JSON.stringify(answer.body));
      assert.equal(answer.body.result.value.transactionResults[0].postExecutionAccounts[0].lamports, 2_000_000);
      assert.equal(await node.getBalance(recipient, 'processed'), 0);
    });

    it('skips an RPC node that answers Method not found (not a Jito-Solana node), and says so', async () => {
      // A node that knows no simulateBundle, as an Agave node does not.
      const plainNode = http.createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const { id, method } = JSON.parse(body) as { id: number; method: string };
          response.setHeader('content-type', 'application/json');
          response.end(
            JSON.stringify(
              method === 'getSlot'
                ? { jsonrpc: '2.0', result: 1, id }
                : { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id },
            ),
          );
        });
      });
      await new Promise<void>((resolve) => plainNode.listen(0, '127.0.0.1', resolve));
      const plain = await startTestGateway(
        {},
        {
          upstreams: { agave: { type: 'rpc', urls: [`http://127.0.0.1:${(plainNode.address() as AddressInfo).port}`] } },
          routes: { sendTransaction: ['agave'], submitBatch: ['agave'], sendBundle: [], antiMev: [], reads: 'agave' },
        },
      );
      try {
        const answer = await simulate(plain.url, plain.key, [
          { encodedTransactions: [await transfer(ctx.connection, ctx.payer, ctx.payer.publicKey, 1)] },
        ]);
        assert.equal(answer.body.error?.code, -32092, JSON.stringify(answer.body));
        assert.match(answer.body.error.message, /none of its upstreams for bundles and reads \(agave\) simulates bundles/);
      } finally {
        await plain.close();
        plainNode.close();
      }
    });

    it('is refused, naming the upstreams asked, where none simulates bundles', async () => {
      const answer = await simulate(sinkOnly.url, sinkOnly.key, [
        { encodedTransactions: [await transfer(ctx.connection, ctx.payer, ctx.payer.publicKey, 1)] },
      ]);
      assert.equal(answer.body.error?.code, -32092, JSON.stringify(answer.body));
      assert.match(
        answer.body.error.message,
        /simulateBundle is not available on this gateway: none of its upstreams for bundles and reads \(sink\) simulates bundles/,
      );
    });
  });
});
