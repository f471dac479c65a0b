import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { useGateway } from '../helpers/use-gateway';
import { rpc, submitBatch } from '../helpers/rpc';
import { fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const ctx = useGateway();

describe('reads answered from the embedded ledger, in Solana shapes (through web3.js)', () => {
  it('blockhash, block height, slot, version and health', async () => {
    // Slots pass between calls (50 ms each, more on a busy machine): the height is read on both sides.
    const before = await ctx.connection.getBlockHeight();
    const { blockhash, lastValidBlockHeight } = await ctx.connection.getLatestBlockhash();
    const height = await ctx.connection.getBlockHeight();
    assert.ok(lastValidBlockHeight >= before + 149 && lastValidBlockHeight <= height + 150, `${before} ${lastValidBlockHeight} ${height}`);
    assert.equal((await ctx.connection.isBlockhashValid(blockhash)).value, true);
    assert.equal((await ctx.connection.isBlockhashValid('4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM')).value, false);
    assert.ok((await ctx.connection.getSlot()) >= height);
    assert.equal(typeof (await ctx.connection.getVersion())['solana-core'], 'string');
    assert.equal((await rpc(ctx.gw.url, ctx.gw.key, 'getHealth')).body.result, 'ok');
  });

  it('accounts and rent', async () => {
    const alice = await fundedKeypair(ctx.connection, 2);
    const info = await ctx.connection.getAccountInfo(alice.publicKey);
    assert.equal(info?.lamports, 2 * LAMPORTS_PER_SOL);
    assert.equal(info?.owner.toBase58(), '11111111111111111111111111111111');
    assert.equal(info?.data.length, 0);
    assert.equal(await ctx.connection.getAccountInfo(Keypair.generate().publicKey), null);
    assert.equal(await ctx.connection.getMinimumBalanceForRentExemption(0), 890_880);
    const bad = await rpc(ctx.gw.url, ctx.gw.key, 'getBalance', ['not-an-address']);
    assert.equal(bad.body.error.code, -32602);
  });

  it('records anti_mev with each submission in the journal', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const protectedOne = await rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [
      await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000),
      { encoding: 'base64' },
    ]);
    const batch = await submitBatch(
      ctx.gw.url,
      ctx.gw.key,
      [await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000)],
      [],
      '?anti_mev=1',
    );
    await waitForStatus(ctx.connection, protectedOne.body.result);
    const row = async (signature: string) => {
      const [entry] = await ctx.gw.app.journal.find(signature);
      return { kind: entry!.kind, antiMev: entry!.antiMev };
    };
    assert.deepEqual(await row(protectedOne.body.result), { kind: 'transaction', antiMev: false });
    assert.deepEqual(await row(batch.body.signatures[0]), { kind: 'batch', antiMev: true });
  });

  it('refuses params that do not fit a read method (too many, a config that is not an object, a missing argument) with -32602 naming the parameter, on every route', async () => {
    const address = Keypair.generate().publicKey.toBase58();
    const cases: [string, unknown[], string][] = [
      ['getBalance', [address, 1], "Invalid params: getBalance's params[1] (config) must be a configuration object; got 1"],
      ['getAccountInfo', [address, 'x'], 'Invalid params: getAccountInfo\'s params[1] (config) must be a configuration object; got "x"'],
      ['getBalance', [], 'Invalid params: getBalance needs params[0] (pubkey): it takes [pubkey, config?]'],
      ['getSlot', new Array(20_000).fill(0), 'Invalid params: getSlot takes at most 1 params [config?]; got 20000'],
      ['getHealth', [1], 'Invalid params: getHealth takes no params; got 1'],
      [
        'getMultipleAccounts',
        [[address, 7]],
        'Invalid params: getMultipleAccounts\'s params[0] (pubkeys) must be an array of strings; got ["' + address + '",7]',
      ],
      [
        'getMinimumBalanceForRentExemption',
        [-1],
        "Invalid params: getMinimumBalanceForRentExemption's params[0] (data length) must be a non-negative integer; got -1",
      ],
    ];
    for (const [method, params, message] of cases) {
      const answer = await rpc(ctx.gw.url, ctx.gw.key, method, params, 4);
      assert.deepEqual(answer.body, { jsonrpc: '2.0', error: { code: -32602, message }, id: 4 }, method);
    }
    // What Agave takes: a missing or null config, and getTransaction's encoding given as a string.
    assert.equal(typeof (await rpc(ctx.gw.url, ctx.gw.key, 'getSlot', [null])).body.result, 'number');
    assert.equal((await rpc(ctx.gw.url, ctx.gw.key, 'getBalance', [address, null])).body.result.value, 0);
    const found = await rpc(ctx.gw.url, ctx.gw.key, 'getTransaction', [
      '1111111111111111111111111111111111111111111111111111111111111111',
      'json',
    ]);
    assert.equal(found.body.error, undefined, JSON.stringify(found.body));
  });
});
