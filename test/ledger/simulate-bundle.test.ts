/**
 * `simulateBundle` on the local cluster's node, in Jito-Solana's shape, through real HTTP:
 * each transaction on the state the previous ones left, the failing one named with its
 * error and logs, the accounts asked for before and after, nothing committed; its options
 * (signatures, blockhash replacement, encodings) and its refusals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { startCluster, type Cluster } from '../helpers/cluster';
import { post } from '../helpers/rpc';
import { fundedKeypair, waitForStatus } from '../helpers/solana';
import { scalarKeyPair, torsionSignature } from '../helpers/torsion-signature';

interface TransactionResult {
  err: unknown;
  logs: string[];
  unitsConsumed: number;
  preExecutionAccounts: ({ lamports: number } | null)[] | null;
  postExecutionAccounts: ({ lamports: number } | null)[] | null;
}

describe('simulateBundle on the local cluster', () => {
  let cluster: Cluster;
  let node: string;
  let chain: Connection;
  let payer: Keypair;

  before(async () => {
    cluster = await startCluster(1);
    node = cluster.nodes[0]!.url;
    chain = new Connection(node, 'confirmed');
    payer = await fundedKeypair(chain, 10);
  });
  after(async () => {
    await cluster.close();
  });

  const transfer = async (from: Keypair, to: PublicKey, lamports: number, blockhash?: string) => {
    const tx = new Transaction({
      feePayer: from.publicKey,
      recentBlockhash: blockhash ?? (await chain.getLatestBlockhash()).blockhash,
    }).add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }));
    tx.sign(from);
    return tx.serialize();
  };
  const signatureOf = (wire: Buffer) => bs58.encode(wire.subarray(1, 65));
  const simulate = async (params: unknown[], path = '/') => {
    const answer = await post(`${node}${path}`, { jsonrpc: '2.0', id: 1, method: 'simulateBundle', params });
    return answer.body;
  };

  it('runs each transaction on what the previous left, reports the accounts asked for, and commits nothing', async () => {
    const middle = Keypair.generate();
    const recipient = Keypair.generate().publicKey;
    // The second transfer spends what the first gives: alone it would fail (the account does not exist).
    const first = await transfer(payer, middle.publicKey, 2 * LAMPORTS_PER_SOL);
    const second = await transfer(middle, recipient, LAMPORTS_PER_SOL);
    const watched = { addresses: [middle.publicKey.toBase58(), recipient.toBase58()], encoding: 'base64' };
    const body = await simulate([
      { encodedTransactions: [first.toString('base64'), second.toString('base64')] },
      { preExecutionAccountsConfigs: [watched, null], postExecutionAccountsConfigs: [watched, watched] },
    ]);
    assert.equal(body.error, undefined, JSON.stringify(body));
    const { summary, transactionResults } = body.result.value as { summary: unknown; transactionResults: TransactionResult[] };
    assert.equal(summary, 'succeeded');
    assert.equal(typeof body.result.context.slot, 'number');
    assert.equal(transactionResults.length, 2);
    assert.deepEqual(
      transactionResults.map((result) => result.err),
      [null, null],
    );
    assert.ok(transactionResults.every((result) => result.logs.length > 0 && result.unitsConsumed > 0));
    assert.deepEqual(transactionResults[0]!.preExecutionAccounts, [null, null]);
    assert.deepEqual(
      transactionResults[0]!.postExecutionAccounts!.map((account) => account?.lamports ?? null),
      [2 * LAMPORTS_PER_SOL, null],
    );
    assert.equal(transactionResults[1]!.preExecutionAccounts, null);
    assert.deepEqual(
      transactionResults[1]!.postExecutionAccounts!.map((account) => account?.lamports ?? null),
      [LAMPORTS_PER_SOL - 5_000, LAMPORTS_PER_SOL],
    );
    // Nothing committed: no balance moved, no status.
    assert.equal(await chain.getBalance(middle.publicKey, 'processed'), 0);
    assert.equal(await chain.getBalance(recipient, 'processed'), 0);
    assert.deepEqual((await chain.getSignatureStatuses([signatureOf(first), signatureOf(second)])).value, [null, null]);
  });

  it('names the failing transaction with its error and logs, runs none after it, and puts back what the earlier ones changed', async () => {
    const recipient = Keypair.generate().publicKey;
    const poor = Keypair.generate();
    const before = await chain.getBalance(payer.publicKey, 'processed');
    const txs = [
      await transfer(payer, recipient, LAMPORTS_PER_SOL),
      await transfer(payer, poor.publicKey, 1_000_000),
      // More than `poor` holds after the second: the system program refuses (custom error 1).
      await transfer(poor, recipient, 5_000_000),
      await transfer(payer, recipient, 7),
    ];
    const body = await simulate([{ encodedTransactions: txs.map((tx) => tx.toString('base64')) }]);
    const { summary, transactionResults } = body.result.value as { summary: unknown; transactionResults: TransactionResult[] };
    const failing = signatureOf(txs[2]!);
    assert.deepEqual(summary, {
      failed: {
        error: { TransactionFailure: [failing, 'Error processing Instruction 0: custom program error: 0x1'] },
        tx_signature: failing,
      },
    });
    assert.equal(transactionResults.length, 3);
    assert.deepEqual(transactionResults[2]!.err, { InstructionError: [0, { Custom: 1 }] });
    assert.ok(
      transactionResults[2]!.logs.some((line) => /insufficient lamports/.test(line)),
      transactionResults[2]!.logs.join('\n'),
    );
    assert.equal(await chain.getBalance(recipient, 'processed'), 0);
    assert.equal(await chain.getBalance(payer.publicKey, 'processed'), before);
  });

  it('checks signatures unless skipSigVerify, and blockhashes unless replaceRecentBlockhash; takes base58 when asked', async () => {
    const forged = await transfer(payer, Keypair.generate().publicKey, 1_000_000);
    forged[10]! ^= 0xff;
    const forgedAnswer = (await simulate([{ encodedTransactions: [forged.toString('base64')] }])).result.value;
    assert.equal(forgedAnswer.transactionResults[0].err, 'SignatureFailure');
    assert.equal(
      (await simulate([{ encodedTransactions: [forged.toString('base64')] }, { skipSigVerify: true }])).result.value.summary,
      'succeeded',
    );

    // A signature the cofactored rule accepts and the validators' (libsodium's) refuses: the
    // node stands in for them, here as in sendTransaction (test/helpers/torsion-signature.ts).
    const { a, key } = scalarKeyPair();
    const owner = new PublicKey(key);
    await waitForStatus(chain, await chain.requestAirdrop(owner, LAMPORTS_PER_SOL));
    const message = new Transaction({ feePayer: owner, recentBlockhash: (await chain.getLatestBlockhash()).blockhash })
      .add(SystemProgram.transfer({ fromPubkey: owner, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }))
      .compileMessage()
      .serialize();
    const { torsion, honest } = torsionSignature(message, a, key);
    const signedWith = (signature: Buffer) => Buffer.concat([Buffer.of(1), signature, message]).toString('base64');
    assert.equal((await simulate([{ encodedTransactions: [signedWith(honest)] }])).result.value.summary, 'succeeded');
    assert.equal(
      (await simulate([{ encodedTransactions: [signedWith(torsion)] }])).result.value.transactionResults[0].err,
      'SignatureFailure',
    );

    const stale = await transfer(payer, Keypair.generate().publicKey, 1_000_000, bs58.encode(Buffer.alloc(32, 7)));
    assert.equal(
      (await simulate([{ encodedTransactions: [stale.toString('base64')] }])).result.value.transactionResults[0].err,
      'BlockhashNotFound',
    );
    assert.equal(
      (await simulate([{ encodedTransactions: [stale.toString('base64')] }, { replaceRecentBlockhash: true }])).result.value.summary,
      'succeeded',
    );
    const plain = await transfer(payer, Keypair.generate().publicKey, 1_000_000);
    const base58 = await simulate([
      { encodedTransactions: [bs58.encode(plain)] },
      { transactionEncoding: 'base58', simulationBank: 'tip' },
    ]);
    assert.equal(base58.result.value.summary, 'succeeded');
  });

  it('refuses malformed requests with -32602 and says what is wrong; the block engine path does not simulate', async () => {
    const tx = (await transfer(payer, Keypair.generate().publicKey, 1_000_000)).toString('base64');
    const cases: [unknown[], RegExp][] = [
      [[], /params\[0\] must be an object/],
      [[[tx]], /params\[0\] must be an object/],
      [[{ encodedTransactions: [] }], /non-empty array/],
      [[{ encodedTransactions: Array(6).fill(tx) }], /has 6 transactions; a bundle has at most 5/],
      [[{ encodedTransactions: [tx, 7] }], /encodedTransactions\[1\] must be a string/],
      [[{ encodedTransactions: [tx, tx] }], /contains transaction \w+ twice/],
      [[{ encodedTransactions: [tx] }, { transactionEncoding: 'json' }], /transactionEncoding must be base64 or base58/],
      [
        [{ encodedTransactions: [tx] }, { preExecutionAccountsConfigs: [null, null] }],
        /has 2 entries; it must have one per transaction \(1\)/,
      ],
      [
        [{ encodedTransactions: [tx] }, { postExecutionAccountsConfigs: [{ addresses: ['nope'] }] }],
        /addresses\[0\] is not a base58 address/,
      ],
      [[{ encodedTransactions: [tx] }, { simulationBank: 'latest' }], /simulationBank must be/],
      [[{ encodedTransactions: [tx] }, { skipSigVerify: 'yes' }], /skipSigVerify must be true or false/],
      [[{ encodedTransactions: ['not base64!'] }], /invalid base64 encoding/i],
    ];
    for (const [params, message] of cases) {
      const body = await simulate(params);
      assert.equal(body.error?.code, -32602, `${JSON.stringify(params).slice(0, 80)} → ${JSON.stringify(body)}`);
      assert.match(body.error.message, message);
    }
    const engine = await simulate([{ encodedTransactions: [tx] }], '/api/v1/bundles');
    assert.equal(engine.error?.code, -32601, JSON.stringify(engine));
  });
});
