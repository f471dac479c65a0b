import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, TransactionMessage, VersionedTransaction, type Connection } from '@solana/web3.js';
import type { RpcAnswer } from '../../src/core/rpc-types';
import { LEDGER_RPC_METHODS } from '../../src/ledger/ledger-rpc';
import { LocalLedger } from '../../src/ledger/local-ledger';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc } from '../helpers/rpc';
import { connect, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

describe('getTransaction and getBlock on the embedded ledger', () => {
  let gw: TestGateway;
  let connection: Connection;
  before(async () => {
    gw = await startTestGateway({ slotMs: 50, readMethods: '*' }); // the ledger's block reads, beyond the default allow-list
    connection = connect(gw.url, gw.key);
  });
  after(() => gw.close());

  it('a landed transfer: its slot, fee and balances; its block names the slot leader in the Fee reward', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const signature = await connection.sendRawTransaction(
      Buffer.from(await transferTx(connection, alice, bob.publicKey, 0.5 * LAMPORTS_PER_SOL), 'base64'),
    );
    const status = await waitForStatus(connection, signature);

    const tx = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    assert.ok(tx !== null && tx.meta !== null);
    assert.equal(tx.slot, status.slot);
    assert.equal(tx.version, 'legacy');
    assert.equal(tx.meta.err, null);
    assert.equal(tx.meta.fee, 5000);
    const keys = tx.transaction.message.staticAccountKeys.map((k) => k.toBase58());
    const alicePos = keys.indexOf(alice.publicKey.toBase58());
    const bobPos = keys.indexOf(bob.publicKey.toBase58());
    assert.equal(tx.meta.preBalances[alicePos]! - tx.meta.postBalances[alicePos]!, 0.5 * LAMPORTS_PER_SOL + 5000);
    assert.deepEqual([tx.meta.preBalances[bobPos], tx.meta.postBalances[bobPos]], [0, 0.5 * LAMPORTS_PER_SOL]);
    assert.ok(tx.meta.logMessages!.some((line) => line.includes('11111111111111111111111111111111 success')));
    assert.equal(tx.transaction.signatures[0], signature);

    const block = await connection.getBlock(tx.slot, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    assert.ok(block !== null);
    assert.ok(block.transactions.some((t) => t.transaction.signatures[0] === signature));
    assert.equal(block.parentSlot, tx.slot - 1);
    const [leader] = (await rpc(gw.url, gw.key, 'getSlotLeaders', [tx.slot, 1])).body.result;
    assert.equal(block.rewards!.length, 1);
    assert.deepEqual([block.rewards![0]!.pubkey, block.rewards![0]!.rewardType], [leader, 'Fee']);
    assert.ok(block.rewards![0]!.lamports >= 2500);
    assert.equal(typeof block.blockTime, 'number');
    const signatures = (await rpc(gw.url, gw.key, 'getBlock', [tx.slot, { transactionDetails: 'signatures', rewards: false }])).body.result;
    assert.ok(signatures.signatures.includes(signature));
    assert.equal(signatures.rewards, undefined);
    assert.equal(signatures.transactions, undefined);
  });

  it('a transaction that failed on chain: its error and the fee it paid', async () => {
    const alice = await fundedKeypair(connection);
    const signature = await connection.sendRawTransaction(
      Buffer.from(await failingTransferTx(connection, alice, Keypair.generate().publicKey), 'base64'),
      { skipPreflight: true },
    );
    await waitForStatus(connection, signature);
    const tx = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    assert.deepEqual(tx!.meta!.err, { InstructionError: [0, { Custom: 1 }] });
    assert.equal(tx!.meta!.fee, 5000);
  });

  it('a v0 transaction: refused to a client that does not read versioned ones (-32015), given with its version otherwise; encodings', async () => {
    const alice = await fundedKeypair(connection);
    const message = new TransactionMessage({
      payerKey: alice.publicKey,
      recentBlockhash: (await connection.getLatestBlockhash()).blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 })],
    }).compileToV0Message();
    const v0 = new VersionedTransaction(message);
    v0.sign([alice]);
    const signature = await connection.sendRawTransaction(v0.serialize());
    await waitForStatus(connection, signature);
    const refused = (await rpc(gw.url, gw.key, 'getTransaction', [signature, { encoding: 'json' }])).body;
    assert.equal(refused.error.code, -32015);
    assert.match(refused.error.message, /"maxSupportedTransactionVersion": 0/);
    const base64 = (await rpc(gw.url, gw.key, 'getTransaction', [signature, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]))
      .body.result;
    assert.equal(base64.version, 0);
    assert.deepEqual(base64.transaction, [Buffer.from(v0.serialize()).toString('base64'), 'base64']);
    assert.deepEqual(base64.meta.loadedAddresses, { writable: [], readonly: [] });
    const parsed = (await rpc(gw.url, gw.key, 'getTransaction', [signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }]))
      .body.error;
    assert.deepEqual(parsed, {
      code: -32602,
      message: 'encoding jsonParsed is not supported by the embedded ledger; use json, base64 or base58',
    });
  });

  it('unknown signatures, future and forgotten slots', async () => {
    assert.equal(await connection.getTransaction('1'.repeat(64), { maxSupportedTransactionVersion: 0 }), null);
    const slot = await connection.getSlot('processed');
    const future = (await rpc(gw.url, gw.key, 'getBlock', [slot + 1_000])).body.error;
    assert.deepEqual(future, { code: -32004, message: `Block not available for slot ${slot + 1_000}` });
    const forgotten = (await rpc(gw.url, gw.key, 'getBlock', [1])).body.error;
    assert.equal(forgotten.code, -32001);
    assert.match(forgotten.message, /^Block 1 cleaned up, does not exist on node\. First available block: \d+$/);
  });
});

describe('getBlock on the embedded ledger, slot by slot', () => {
  it('serves no block for the slot being produced, one at confirmed once the next slot began, at finalized 32 slots on', () => {
    const ledger = LocalLedger.open({ slotMs: 1_000 });
    const getBlock = (slot: number, commitment?: string) =>
      LEDGER_RPC_METHODS.getBlock!(ledger, [slot, { transactionDetails: 'signatures', ...(commitment && { commitment }) }]) as RpcAnswer;
    const notAvailable = (slot: number) => ({ error: { code: -32004, message: `Block not available for slot ${slot}` } });
    ledger.advanceSlot();
    const slot = ledger.currentSlot;
    assert.deepEqual(getBlock(slot), notAvailable(slot), 'its leader is still packing it');
    ledger.advanceSlot();
    assert.deepEqual((getBlock(slot) as { result: { signatures: string[] } }).result.signatures, []);
    assert.deepEqual(getBlock(slot, 'confirmed'), getBlock(slot));
    assert.deepEqual(getBlock(slot, 'finalized'), notAvailable(slot));
    for (let i = 0; i < 31; i++) ledger.advanceSlot();
    assert.deepEqual(getBlock(slot, 'finalized'), getBlock(slot));
    assert.deepEqual(getBlock(slot, 'processed'), {
      error: { code: -32602, message: 'Method does not support commitment below `confirmed`' },
    });
    assert.deepEqual(getBlock(slot, 'recent'), { error: { code: -32602, message: 'commitment must be confirmed or finalized' } });
  });

  it('serves no block in full once the history forgot any of its transactions: it is cleaned up, and the first whole block is named', () => {
    const ledger = LocalLedger.open({ slotMs: 1_000 });
    ledger.advanceSlot();
    const first = ledger.currentSlot;
    const landed = (slot: number) => ({
      slot,
      wire: Buffer.alloc(0),
      version: 'legacy' as const,
      err: null,
      fee: 5_000,
      preBalances: [],
      postBalances: [],
      loadedAddresses: { writable: [], readonly: [] },
      logs: [],
      unitsConsumed: 150,
      loadedAccountsBytes: undefined,
    });
    // 6,000 transactions in one slot and 5,000 in the next: the history keeps 10,000, so the first block loses 1,000.
    for (let i = 0; i < 6_000; i++) ledger.history.record(`a${i}`, landed(first));
    ledger.advanceSlot();
    for (let i = 0; i < 5_000; i++) ledger.history.record(`b${i}`, landed(first + 1));
    ledger.advanceSlot();
    assert.equal(ledger.history.firstCompleteSlot, first + 1);
    const getBlock = (slot: number, transactionDetails: string) =>
      LEDGER_RPC_METHODS.getBlock!(ledger, [slot, { transactionDetails, rewards: false }]) as RpcAnswer;
    assert.deepEqual(getBlock(first, 'full'), {
      error: { code: -32001, message: `Block ${first} cleaned up, does not exist on node. First available block: ${first + 1}` },
    });
    assert.equal(
      (getBlock(first, 'signatures') as { result: { signatures: string[] } }).result.signatures.length,
      6_000,
      'its signatures are all kept',
    );
  });
});
