import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import bs58 from 'bs58';
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
  it('refuses status lookups by what is not an ID of their kind (a signature, a bundle ID), and a config that is not an object, with -32602 naming the entry', async () => {
    const signature = '1111111111111111111111111111111111111111111111111111111111111111';
    const bundleId = 'ab'.repeat(32);
    const realSignature = bs58.encode(Buffer.alloc(64, 0xab));
    const cases: [string, unknown[], string][] = [
      [
        'getSignatureStatuses',
        [[signature, 'x'.repeat(5000)]],
        `Invalid params: getSignatureStatuses's params[0][1] is not a base58 signature (64 bytes): "${'x'.repeat(63)}…`,
      ],
      [
        'getSignatureStatuses',
        [['1'.repeat(40)]],
        `Invalid params: getSignatureStatuses's params[0][0] is not a base58 signature (64 bytes): "${'1'.repeat(40)}"`,
      ],
      [
        'getSignatureStatuses',
        [[bundleId]],
        `Invalid params: getSignatureStatuses's params[0][0] is not a base58 signature (64 bytes): "${bundleId.slice(0, 63)}…`,
      ],
      [
        'getSignatureStatuses',
        [[signature], 1],
        "Invalid params: getSignatureStatuses's params[1] (config) must be a configuration object; got 1",
      ],
      ['getSignatureStatuses', [[signature], {}, 1], 'Invalid params: getSignatureStatuses takes at most 2 params [ids, config?]; got 3'],
      [
        'getBundleStatuses',
        [[realSignature]],
        `Invalid params: getBundleStatuses's params[0][0] is not a bundle ID (64 hex digits): "${realSignature.slice(0, 63)}…`,
      ],
      [
        'getInflightBundleStatuses',
        [['zz'.repeat(32)]],
        `Invalid params: getInflightBundleStatuses's params[0][0] is not a bundle ID (64 hex digits): "${'zz'.repeat(32).slice(0, 63)}…`,
      ],
      [
        'getSubmissionStatuses',
        [[bundleId, signature, 'nope']],
        'Invalid params: getSubmissionStatuses\'s params[0][2] is not a signature or a bundle ID: "nope"',
      ],
    ];
    for (const [method, params, message] of cases) {
      const answer = await rpc(ctx.gw.url, ctx.gw.key, method, params, 5);
      assert.deepEqual(
        answer.body,
        { jsonrpc: '2.0', error: { code: -32602, message }, id: 5 },
        `${method} ${JSON.stringify(params).slice(0, 80)}`,
      );
    }
    // IDs of their kind are looked up (and unknown ones answered null), with or without a config.
    const statuses = await rpc(ctx.gw.url, ctx.gw.key, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }]);
    assert.deepEqual(statuses.body.result.value, [null]);
    assert.deepEqual((await rpc(ctx.gw.url, ctx.gw.key, 'getBundleStatuses', [[bundleId.toUpperCase()]])).body.result.value, [null]);
    assert.deepEqual((await rpc(ctx.gw.url, ctx.gw.key, 'getSubmissionStatuses', [[bundleId, realSignature]])).body.result.value, [
      null,
      null,
    ]);
  });
});
