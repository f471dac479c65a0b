import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { useGateway } from '../helpers/use-gateway';
import { post, submitBatch } from '../helpers/rpc';
import { balanceOf, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const ctx = useGateway();

describe('/submit-batch', () => {
  it('executes members independently: one fails on chain, the others land', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const carol = await fundedKeypair(ctx.connection, 1);
    const bob = Keypair.generate();
    const dave = Keypair.generate();
    const txs = [
      await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000),
      await failingTransferTx(ctx.connection, carol, dave.publicKey),
      await transferTx(ctx.connection, alice, dave.publicKey, 2_000_000),
    ];
    const answer = await submitBatch(ctx.gw.url, ctx.gw.key, txs);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.code, 1);
    assert.equal(answer.body.message, 'success');
    assert.equal(answer.body.signatures.length, 3);
    assert.equal(Object.keys(answer.body).sort().join(), 'code,message,signatures', 'no JSON-RPC wrapping');
    const statuses = await Promise.all(answer.body.signatures.map((s: string) => waitForStatus(ctx.connection, s)));
    assert.equal(statuses[0]!.err, null);
    assert.deepEqual(statuses[1]!.err, { InstructionError: [0, { Custom: 1 }] });
    assert.equal(statuses[2]!.err, null);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
    assert.equal(await balanceOf(ctx.connection, dave.publicKey), 2_000_000);
    assert.equal(await balanceOf(ctx.connection, carol.publicKey), LAMPORTS_PER_SOL - 5000, 'the failed member paid only its fee');
  });

  it('returns signatures in request order and accepts anti_mev=1', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const recipients = [Keypair.generate(), Keypair.generate(), Keypair.generate(), Keypair.generate(), Keypair.generate()];
    const txs = await Promise.all(recipients.map((r, i) => transferTx(ctx.connection, alice, r.publicKey, 1_000_000 + i)));
    const answer = await submitBatch(ctx.gw.url, ctx.gw.key, txs, [], '?anti_mev=1');
    assert.equal(answer.body.code, 1);
    for (const signature of answer.body.signatures as string[]) await waitForStatus(ctx.connection, signature);
    for (const [i, r] of recipients.entries()) assert.equal(await balanceOf(ctx.connection, r.publicKey), 1_000_000 + i);
  });

  it('refuses the whole batch when one entry is invalid, naming it; nothing is submitted', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const good = await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000);
    const forged = Buffer.from(await transferTx(ctx.connection, alice, bob.publicKey, 2_000_000), 'base64');
    forged[10]! ^= 0xff; // corrupt the first signature
    const answer = await submitBatch(ctx.gw.url, ctx.gw.key, [good, forged.toString('base64')]);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, -32003);
    assert.match(answer.body.message, /^transaction 2 \(params\.transactions\[1\]\): Transaction signature verification failure/);
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 0, 'the valid member was not submitted');
    const later = await submitBatch(ctx.gw.url, ctx.gw.key, [good]);
    assert.equal(later.body.code, 1, 'and can be submitted later');
    await waitForStatus(ctx.connection, later.body.signatures[0]);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
  });

  it('a member already submitted is not executed again', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const tx = await transferTx(ctx.connection, alice, bob.publicKey, 1_000_000);
    const first = await submitBatch(ctx.gw.url, ctx.gw.key, [tx]);
    const second = await submitBatch(ctx.gw.url, ctx.gw.key, [tx]);
    assert.deepEqual(second.body.signatures, first.body.signatures);
    await waitForStatus(ctx.connection, first.body.signatures[0]);
    assert.equal(await balanceOf(ctx.connection, bob.publicKey), 1_000_000);
  });

  const refusals: [string, unknown, number, string | RegExp][] = [
    ['empty batch', { transactions: [], options: [] }, -32602, 'params.transactions is empty: a batch needs 1 to 5 transactions'],
    [
      'six transactions',
      { transactions: ['A', 'A', 'A', 'A', 'A', 'A'], options: [] },
      -32602,
      'params.transactions has 6 transactions; at most 5',
    ],
    [
      'options not empty',
      { transactions: ['AAAA'], options: ['fast'] },
      -32602,
      'params.options must be an empty array []: it is reserved for future use and takes no option yet',
    ],
    [
      'options missing',
      { transactions: ['AAAA'] },
      -32602,
      'params.options is required and must be an empty array [] (reserved for future use)',
    ],
    [
      'transactions not an array',
      { transactions: 'AAAA', options: [] },
      -32602,
      'params.transactions must be an array of 1 to 5 Base64 transactions',
    ],
    ['a member not a string', { transactions: [5], options: [] }, -32602, 'transaction 1 (params.transactions[0]) must be a Base64 string'],
    [
      'bad base64 member',
      { transactions: ['AA=A'], options: [] },
      -32602,
      /^transaction 1 \(params\.transactions\[0\]\): invalid base64 encoding/,
    ],
  ];
  for (const [name, params, code, message] of refusals) {
    it(`refuses: ${name}`, async () => {
      const answer = await post(`${ctx.gw.url}/submit-batch`, { jsonrpc: '2.0', id: 1, params }, { 'x-api-key': ctx.gw.key });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.code, code);
      if (typeof message === 'string') assert.equal(answer.body.message, message);
      else assert.match(answer.body.message, message);
    });
  }

  it('refuses the same transaction twice in one batch', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const tx = await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000);
    const answer = await submitBatch(ctx.gw.url, ctx.gw.key, [tx, tx]);
    assert.equal(answer.status, 400);
    assert.equal(
      answer.body.message,
      'transaction 2 (params.transactions[1]) repeats transaction 1: a batch cannot contain the same transaction twice',
    );
  });

  it('refuses malformed bodies in its own shape', async () => {
    const headers = { 'x-api-key': ctx.gw.key };
    const parse = await post(`${ctx.gw.url}/submit-batch`, '{', headers);
    assert.deepEqual([parse.status, parse.body], [400, { code: -32700, message: 'Parse error: the body is not valid JSON' }]);
    const array = await post(`${ctx.gw.url}/submit-batch`, [], headers);
    assert.equal(array.status, 400);
    assert.equal(array.body.code, -32600);
    const noParams = await post(`${ctx.gw.url}/submit-batch`, { jsonrpc: '2.0', id: 1 }, headers);
    assert.equal(noParams.body.code, -32602);
    assert.match(noParams.body.message, /^params must be an object/);
  });
});
