import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { dataPaths } from '../../src/config';
import { useGateway } from '../helpers/use-gateway';
import { rpc, submitBatch } from '../helpers/rpc';
import { fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const ctx = useGateway();

describe('reads answered from the embedded ledger, in Solana shapes (through web3.js)', () => {
  it('blockhash, block height, slot, version and health', async () => {
    const { blockhash, lastValidBlockHeight } = await ctx.connection.getLatestBlockhash();
    const height = await ctx.connection.getBlockHeight();
    assert.ok(lastValidBlockHeight >= height + 149 && lastValidBlockHeight <= height + 150);
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
    const protectedOne = await rpc(ctx.gw.url, ctx.gw.key, 'sendTransaction', [await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000), { encoding: 'base64' }]);
    const batch = await submitBatch(ctx.gw.url, ctx.gw.key, [await transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000)], [], '?anti_mev=1');
    await waitForStatus(ctx.connection, protectedOne.body.result);
    const db = new Database(dataPaths(ctx.gw.dataDir).journal, { readonly: true });
    const row = (signature: string) =>
      db.prepare('SELECT s.kind, s.anti_mev FROM submissions s JOIN submission_transactions t ON t.seq = s.seq WHERE t.signature = ?').get(signature);
    // The journal's log reaches these tables a fraction of a second after the answer.
    for (const started = Date.now(); row(batch.body.signatures[0]) === undefined; ) {
      assert.ok(Date.now() - started < 5_000, 'the journal tables never got the batch');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(row(protectedOne.body.result), { kind: 'transaction', anti_mev: 0 });
    assert.deepEqual(row(batch.body.signatures[0]), { kind: 'batch', anti_mev: 1 });
    db.close();
  });
});
