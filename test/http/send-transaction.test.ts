import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSolanaRpc, address as kitAddress } from '@solana/kit';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  SendTransactionError,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  AddressLookupTableProgram,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { useGateway } from '../helpers/use-gateway';
import { post, rpc } from '../helpers/rpc';
import { balanceOf, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const ctx = useGateway();

const send = (tx: string, config: Record<string, unknown> = { encoding: 'base64' }, id: unknown = 1, query = '') =>
  post(`${ctx.gw.url}/${query}`, { jsonrpc: '2.0', id, method: 'sendTransaction', params: [tx, config] }, { 'x-api-key': ctx.gw.key });

describe('sendTransaction with real clients', () => {
  it('@solana/web3.js: sendRawTransaction lands a legacy transfer (string ids, key in httpHeaders)', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const tx = await transferTx(ctx.connection, alice, bob.publicKey, 0.25 * LAMPORTS_PER_SOL);
    const signature = await ctx.connection.sendRawTransaction(Buffer.from(tx, 'base64'));
    assert.equal(signature, bs58.encode(Transaction.from(Buffer.from(tx, 'base64')).signature!));
    const status = await waitForStatus(ctx.connection, signature);
    assert.equal(status.err, null);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 0.25 * LAMPORTS_PER_SOL);
    assert.equal(await balanceOf(ctx.connection, alice.publicKey), 10 * LAMPORTS_PER_SOL - 0.25 * LAMPORTS_PER_SOL - 5000);
  });

  it('@solana/kit: a v0 transaction that loads its recipient from an address lookup table', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const slot = await ctx.connection.getSlot();
    const [create, table] = AddressLookupTableProgram.createLookupTable({
      authority: alice.publicKey,
      payer: alice.publicKey,
      recentSlot: slot - 1,
    });
    const extend = AddressLookupTableProgram.extendLookupTable({
      lookupTable: table,
      authority: alice.publicKey,
      payer: alice.publicKey,
      addresses: [bob.publicKey],
    });
    const setup = new Transaction({
      feePayer: alice.publicKey,
      recentBlockhash: (await ctx.connection.getLatestBlockhash()).blockhash,
    }).add(create, extend);
    setup.sign(alice);
    await waitForStatus(ctx.connection, await ctx.connection.sendRawTransaction(setup.serialize()));
    await new Promise((resolve) => setTimeout(resolve, 120)); // lookup entries activate in the next slot
    const lookup = (await ctx.connection.getAddressLookupTable(table)).value;
    assert.ok(lookup, 'lookup table exists');

    const rpcClient = createSolanaRpc(ctx.gw.url, { headers: { 'x-api-key': ctx.gw.key } });
    const { value: latest } = await rpcClient.getLatestBlockhash().send();
    const message = new TransactionMessage({
      payerKey: alice.publicKey,
      recentBlockhash: latest.blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob.publicKey, lamports: 1_777_000 })],
    }).compileToV0Message([lookup]);
    assert.equal(message.addressTableLookups.length, 1, 'the recipient comes from the table');
    const tx = new VersionedTransaction(message);
    tx.sign([alice]);
    const encoded = Buffer.from(tx.serialize()).toString('base64');
    const signature = await rpcClient.sendTransaction(encoded as never, { encoding: 'base64' }).send();
    assert.equal(signature, bs58.encode(tx.signatures[0]!));
    await waitForStatus(ctx.connection, signature);
    const { value: balance } = await rpcClient.getBalance(kitAddress(bob.publicKey.toBase58())).send();
    assert.equal(balance, 1_777_000n);
  });

  it('refuses a transaction whose preflight fails with -32002, the logs, and no effect', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const before = await balanceOf(ctx.connection, alice.publicKey);
    const answer = await send(await failingTransferTx(ctx.connection, alice, bob.publicKey));
    assert.equal(answer.status, 200);
    assert.equal(answer.body.error.code, -32002);
    assert.equal(answer.body.error.message, 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1');
    assert.deepEqual(answer.body.error.data.err, { InstructionError: [0, { Custom: 1 }] });
    assert.ok(answer.body.error.data.logs.some((line: string) => line.includes('insufficient lamports')));
    assert.equal(await balanceOf(ctx.connection, alice.publicKey), before, 'no fee: nothing was sent');
  });

  it("web3.js surfaces the preflight failure as a SendTransactionError carrying the System Program's logs", async () => {
    const alice = await fundedKeypair(ctx.connection);
    const balance = await balanceOf(ctx.connection, alice.publicKey);
    const tx = await failingTransferTx(ctx.connection, alice, Keypair.generate().publicKey);
    const error = await ctx.connection.sendRawTransaction(Buffer.from(tx, 'base64')).then(
      () => assert.fail('a transfer of more than the payer holds was accepted'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof SendTransactionError, `a SendTransactionError, not ${String(error)}`);
    assert.match(error.message, /Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1/);
    // The logs came with the refusal (getLogs would otherwise fetch the transaction, which was never sent);
    // the program sees the payer's balance less the fee of 5,000 lamports, taken before it runs.
    assert.deepEqual(error.logs, [
      `Program ${SystemProgram.programId.toBase58()} invoke [1]`,
      `Transfer: insufficient lamports ${balance - 5000}, need ${1_000_000 * LAMPORTS_PER_SOL}`,
      `Program ${SystemProgram.programId.toBase58()} failed: custom program error: 0x1`,
    ]);
    assert.deepEqual(await error.getLogs(ctx.connection), error.logs);
  });

  it('with skipPreflight, a failing transaction is sent, fails on chain, and pays its fee', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const before = await balanceOf(ctx.connection, alice.publicKey);
    const answer = await send(await failingTransferTx(ctx.connection, alice, Keypair.generate().publicKey), {
      encoding: 'base64',
      skipPreflight: true,
    });
    assert.equal(typeof answer.body.result, 'string');
    const status = await waitForStatus(ctx.connection, answer.body.result);
    assert.deepEqual(status.err, { InstructionError: [0, { Custom: 1 }] });
    assert.equal(await balanceOf(ctx.connection, alice.publicKey), before - 5000);
  });

  it('the same bytes again return the same signature and are not executed twice', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const tx = await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000);
    const answers = await Promise.all([send(tx), send(tx), send(tx, { encoding: 'base64', skipPreflight: true })]);
    const again = await send(tx);
    for (const answer of [...answers, again]) assert.equal(answer.body.result, answers[0]!.body.result);
    await waitForStatus(ctx.connection, answers[0]!.body.result);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
    assert.equal(await balanceOf(ctx.connection, alice.publicKey), 10 * LAMPORTS_PER_SOL - 1_000_000 - 5000);
    // The ledger would refuse a second execution anyway: what shows the gateway sent it once is its journal.
    assert.equal((await ctx.gw.app.journal.find(answers[0]!.body.result)).length, 1, 'journaled (and forwarded) once');
  });

  it('a different transaction reusing a known first signature is verified, and fails', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const tx = await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000);
    const first = await send(tx);
    assert.equal(typeof first.body.result, 'string');
    const forged = Buffer.from(tx, 'base64');
    forged.writeBigUInt64LE(9_000_000_000n, forged.length - 8); // the transfer's amount
    const answer = await send(forged.toString('base64'));
    assert.equal(answer.body.error.code, -32003);
    assert.match(answer.body.error.message, /^Transaction signature verification failure: signature 0 does not verify/);
    await waitForStatus(ctx.connection, first.body.result);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
  });

  it('refuses a transaction whose blockhash is unknown, as a node does', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const tx = new Transaction({ feePayer: alice.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 7)) }).add(
      SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 }),
    );
    tx.sign(alice);
    const answer = await send(tx.serialize().toString('base64'));
    assert.equal(answer.body.error.code, -32002);
    assert.equal(answer.body.error.message, 'Transaction simulation failed: Blockhash not found');
    assert.equal(answer.body.error.data.err, 'BlockhashNotFound');
  });

  it('accepts anti_mev=1 and records it', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const answer = await send(await transferTx(ctx.connection, alice, bob.publicKey, 5_000_000), { encoding: 'base64' }, 1, '?anti_mev=1');
    await waitForStatus(ctx.connection, answer.body.result);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 5_000_000);
    const refused = await send('AAAA', { encoding: 'base64' }, 1, '?anti_mev=yes');
    assert.equal(refused.body.error.code, -32602);
    assert.match(refused.body.error.message, /anti_mev query parameter must be 1/);
  });

  it('honours minContextSlot', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const tx = await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1);
    const answer = await send(tx, { encoding: 'base64', minContextSlot: Number.MAX_SAFE_INTEGER });
    assert.equal(answer.body.error.code, -32016);
    assert.equal(answer.body.error.message, 'Minimum context slot has not been reached');
    assert.equal(typeof answer.body.error.data.contextSlot, 'number');
  });
});

describe('sendTransaction refusals name the problem', () => {
  const cases: [string, unknown[], number, string | RegExp][] = [
    ['no params', [], -32602, 'params[0] must be the signed transaction, a Base64 string'],
    ['a number', [5, { encoding: 'base64' }], -32602, 'params[0] must be the signed transaction, a Base64 string'],
    ['no config', ['AAAA'], -32602, 'params[1] is required: pass {"encoding": "base64"}'],
    ['base58', ['AAAA', { encoding: 'base58' }], -32602, 'params[1].encoding must be "base64" (got "base58")'],
    ['no encoding', ['AAAA', {}], -32602, 'params[1].encoding is required and must be "base64"'],
    ['bad skipPreflight', ['AAAA', { encoding: 'base64', skipPreflight: 'yes' }], -32602, 'params[1].skipPreflight must be true or false'],
    ['bad commitment', ['AAAA', { encoding: 'base64', preflightCommitment: 'max' }], -32602, /preflightCommitment must be/],
    ['bad maxRetries', ['AAAA', { encoding: 'base64', maxRetries: -1 }], -32602, 'params[1].maxRetries must be a non-negative integer'],
    ['three params', ['AAAA', { encoding: 'base64' }, 1], -32602, 'sendTransaction takes 2 params ([transaction, config]); got 3'],
    ['bad base64', ['AAA*', { encoding: 'base64' }], -32602, 'invalid base64 encoding: InvalidByte(3, 42)'],
    [
      'too long',
      ['A'.repeat(1648), { encoding: 'base64' }],
      -32602,
      /^base64 encoded .* too large: 1648 bytes \(max: encoded\/raw 1644\/1232\)$/,
    ],
    [
      'too large decoded',
      [Buffer.alloc(1233).toString('base64').slice(0, 1644), { encoding: 'base64' }],
      -32602,
      /^decoded .* too large: 1233 bytes/,
    ],
    [
      'garbage',
      [Buffer.from('hello world!').toString('base64'), { encoding: 'base64' }],
      -32602,
      /^failed to deserialize solana_transaction::versioned::VersionedTransaction/,
    ],
  ];
  for (const [name, params, code, message] of cases) {
    it(name, async () => {
      const answer = await rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', params, 'id-7');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.id, 'id-7');
      assert.equal(answer.body.error.code, code);
      if (typeof message === 'string') assert.equal(answer.body.error.message, message);
      else assert.match(answer.body.error.message, message);
    });
  }

  it('a transaction missing a signature is not fully signed', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const tx = new Transaction({ feePayer: alice.publicKey, recentBlockhash: (await ctx.connection.getLatestBlockhash()).blockhash }).add(
      SystemProgram.transfer({ fromPubkey: bob.publicKey, toPubkey: alice.publicKey, lamports: 1 }),
    );
    tx.partialSign(alice);
    const answer = await send(tx.serialize({ requireAllSignatures: false }).toString('base64'));
    assert.equal(answer.body.error.code, -32003);
    assert.match(answer.body.error.message, /is empty: the transaction is not fully signed$/);
  });
});

describe('JSON-RPC envelope', () => {
  it('echoes number, string and null ids exactly', async () => {
    for (const id of [7, 'abc', null, 0, 1.5]) {
      const answer = await rpc(ctx.gw.url, ctx.gw.key, 'getSlot', [], id);
      assert.equal(answer.body.id, id);
      assert.equal(typeof answer.body.result, 'number');
    }
  });

  it('answers malformed JSON with -32700, unknown methods with -32601, wrong shapes with -32600', async () => {
    const headers = { 'x-api-key': ctx.gw.key };
    const parse = await post(ctx.gw.url, '{"jsonrpc":"2.0",', headers);
    assert.equal(parse.status, 200);
    assert.deepEqual(parse.body, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not valid JSON' }, id: null });
    const unknown = await rpc(ctx.gw.url, ctx.gw.key, 'getEverything', [], 3);
    assert.equal(unknown.body.id, 3);
    assert.equal(unknown.body.error.code, -32601);
    assert.match(unknown.body.error.message, /^Method not found: getEverything is not served by this gateway.*readMethods/);
    const version = await post(ctx.gw.url, { jsonrpc: '1.0', id: 1, method: 'getSlot' }, headers);
    assert.equal(version.body.error.code, -32600);
    assert.equal(version.body.error.message, 'Invalid Request: jsonrpc must be "2.0"');
    const badId = await post(ctx.gw.url, { jsonrpc: '2.0', id: { a: 1 }, method: 'getSlot' }, headers);
    assert.equal(badId.body.error.code, -32600);
    const notObject = await post(ctx.gw.url, '"hello"', headers);
    assert.equal(notObject.body.error.code, -32600);
    const params = await post(ctx.gw.url, { jsonrpc: '2.0', id: 1, method: 'getSlot', params: { a: 1 } }, headers);
    assert.equal(params.body.error.code, -32602);
  });

  it('answers a batch in order, leaves out notifications, and 204 for notifications only', async () => {
    const headers = { 'x-api-key': ctx.gw.key };
    const batch = await post(
      ctx.gw.url,
      [
        { jsonrpc: '2.0', id: 'a', method: 'getSlot' },
        { jsonrpc: '2.0', method: 'getSlot' },
        { jsonrpc: '2.0', id: 'b', method: 'nope' },
        { jsonrpc: '2.0', id: 'c', method: 'getHealth' },
      ],
      headers,
    );
    assert.equal(batch.status, 200);
    assert.deepEqual(
      batch.body.map((r: { id: string }) => r.id),
      ['a', 'b', 'c'],
    );
    assert.equal(batch.body[1].error.code, -32601);
    assert.equal(batch.body[2].result, 'ok');
    const onlyNotifications = await post(ctx.gw.url, [{ jsonrpc: '2.0', method: 'getSlot' }], headers);
    assert.equal(onlyNotifications.status, 204);
    const single = await post(ctx.gw.url, { jsonrpc: '2.0', method: 'getSlot' }, headers);
    assert.equal(single.status, 204);
    const empty = await post(ctx.gw.url, [], headers);
    assert.equal(empty.body.error.code, -32600);
  });

  it('executes a sendTransaction sent as a notification', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const tx = await transferTx(ctx.connection, alice, bob.publicKey, 3_000_000);
    const answer = await post(
      ctx.gw.url,
      { jsonrpc: '2.0', method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
      { 'x-api-key': ctx.gw.key },
    );
    assert.equal(answer.status, 204);
    await waitForStatus(ctx.connection, bs58.encode(Transaction.from(Buffer.from(tx, 'base64')).signature!));
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 3_000_000);
  });
});
