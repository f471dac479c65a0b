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
});
