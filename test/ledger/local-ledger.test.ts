import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL, NONCE_ACCOUNT_LENGTH, NonceAccount, SystemProgram, Transaction } from '@solana/web3.js';
import { LocalLedger, MAX_PROCESSING_AGE } from '../../src/ledger/local-ledger';
import { LEDGER_RPC_METHODS } from '../../src/ledger/ledger-rpc';
import { validateTransaction, type ValidatedTransaction } from '../../src/validation/validate-transaction';
import { makeDataDir } from '../helpers/gateway';

function fundedLedger() {
  const ledger = LocalLedger.open({ slotMs: 1000 });
  const alice = Keypair.generate();
  ledger.airdrop(alice.publicKey.toBytes(), BigInt(10 * LAMPORTS_PER_SOL));
  return { ledger, alice };
}

function transfer(
  ledger: LocalLedger,
  from: Keypair,
  lamports: number,
  blockhash = ledger.latestBlockhash().blockhash,
): ValidatedTransaction {
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  tx.sign(from);
  const result = validateTransaction(tx.serialize().toString('base64'), '');
  assert.ok(result.ok);
  return result.value;
}

const statusOf = (ledger: LocalLedger, signature: string) =>
  (LEDGER_RPC_METHODS.getSignatureStatuses!(ledger, [[signature]]) as { result: { value: any[] } }).result.value[0];

describe('embedded ledger', () => {
  it('keeps a blockhash valid for 150 slots, as a cluster does', () => {
    const { ledger, alice } = fundedLedger();
    const { blockhash, lastValidBlockHeight } = ledger.latestBlockhash();
    assert.equal(lastValidBlockHeight, ledger.blockHeight + MAX_PROCESSING_AGE);
    for (let i = 0; i < MAX_PROCESSING_AGE; i++) ledger.advanceSlot();
    assert.equal(ledger.isBlockhashValid(blockhash), true);
    const stillValid = transfer(ledger, alice, 1_000_000, blockhash);
    assert.equal(ledger.execute(stillValid).err, null);
    ledger.advanceSlot();
    assert.equal(ledger.isBlockhashValid(blockhash), false);
    const expired = transfer(ledger, alice, 2_000_000, blockhash);
    const outcome = ledger.execute(expired);
    assert.equal(outcome.err, 'BlockhashNotFound');
    assert.equal(outcome.included, false);
    assert.equal(ledger.getSignatureStatus(expired.signature), undefined, 'a dropped transaction has no status');
  });

  it('exempts durable-nonce transactions from the blockhash window', () => {
    const { ledger, alice } = fundedLedger();
    const nonce = Keypair.generate();
    const create = new Transaction({ feePayer: alice.publicKey, recentBlockhash: ledger.latestBlockhash().blockhash }).add(
      ...SystemProgram.createNonceAccount({
        fromPubkey: alice.publicKey,
        noncePubkey: nonce.publicKey,
        authorizedPubkey: alice.publicKey,
        lamports: Number(ledger.minimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH)),
      }).instructions,
    );
    create.sign(alice, nonce);
    const created = validateTransaction(create.serialize().toString('base64'), '');
    assert.ok(created.ok);
    assert.equal(ledger.execute(created.value).err, null);
    ledger.advanceSlot();
    const stored = NonceAccount.fromAccountData(Buffer.from(ledger.getAccount(nonce.publicKey.toBytes())!.data));
    const bob = Keypair.generate();
    const tx = new Transaction({
      feePayer: alice.publicKey,
      nonceInfo: {
        nonce: stored.nonce,
        nonceInstruction: SystemProgram.nonceAdvance({ noncePubkey: nonce.publicKey, authorizedPubkey: alice.publicKey }),
      },
    }).add(SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob.publicKey, lamports: 1_000_000 }));
    tx.sign(alice);
    const durable = validateTransaction(tx.serialize().toString('base64'), '');
    assert.ok(durable.ok);
    assert.equal(durable.value.usesDurableNonce, true);
    for (let i = 0; i <= MAX_PROCESSING_AGE + 5; i++) ledger.advanceSlot();
    assert.equal(ledger.execute(durable.value).err, null, 'lands long after any blockhash would have expired');
    assert.equal(ledger.getAccount(bob.publicKey.toBytes())!.lamports, 1_000_000n);
  });

  it('reports processed, confirmed and finalized by slot depth', () => {
    const { ledger, alice } = fundedLedger();
    const tx = transfer(ledger, alice, 1_000_000);
    ledger.execute(tx);
    assert.equal(statusOf(ledger, tx.signature).confirmationStatus, 'processed');
    assert.equal(statusOf(ledger, tx.signature).confirmations, 0);
    ledger.advanceSlot();
    assert.equal(statusOf(ledger, tx.signature).confirmationStatus, 'confirmed');
    for (let i = 0; i < 31; i++) ledger.advanceSlot();
    assert.equal(statusOf(ledger, tx.signature).confirmationStatus, 'finalized');
    assert.equal(statusOf(ledger, tx.signature).confirmations, null);
  });

  it('never executes a transaction twice', () => {
    const { ledger, alice } = fundedLedger();
    const tx = transfer(ledger, alice, 1_000_000);
    assert.equal(ledger.execute(tx).err, null);
    const again = ledger.execute(tx);
    assert.equal(again.err, 'AlreadyProcessed');
    assert.equal(ledger.getAccount(alice.publicKey.toBytes())!.lamports, BigInt(10 * LAMPORTS_PER_SOL - 1_000_000 - 5000));
  });

  it('undoes every account of a rejected bundle, fees included', () => {
    const { ledger, alice } = fundedLedger();
    const before = ledger.getAccount(alice.publicKey.toBytes())!.lamports;
    const good = transfer(ledger, alice, 1_000_000);
    const bad = transfer(ledger, alice, 100 * LAMPORTS_PER_SOL);
    const outcome = ledger.executeBundle('b1', [good, bad]);
    assert.equal(outcome.landed, false);
    assert.equal(ledger.getAccount(alice.publicKey.toBytes())!.lamports, before);
    const recipient = good.wire.staticAccountKeys[1]!;
    assert.equal(ledger.getAccount(recipient), null, 'the account the bundle created is gone again');
    assert.equal(ledger.getSignatureStatus(good.signature), undefined);
    assert.equal(ledger.execute(good).err, null, 'and the good transaction can still land');
  });

  it('saves and reopens its whole state', () => {
    const dir = makeDataDir();
    try {
      const { ledger, alice } = fundedLedger();
      const tx = transfer(ledger, alice, 1_000_000);
      ledger.execute(tx);
      const earlier = new Set([ledger.latestBlockhash().blockhash]);
      ledger.advanceSlot();
      earlier.add(ledger.latestBlockhash().blockhash);
      ledger.save(dir);
      const reopened = LocalLedger.open({ slotMs: 1000 }, dir);
      assert.equal(reopened.currentSlot, ledger.currentSlot);
      assert.equal(reopened.latestBlockhash().blockhash, ledger.latestBlockhash().blockhash, 'the same blockhash chain continues');

      assert.equal(reopened.getAccount(alice.publicKey.toBytes())!.lamports, ledger.getAccount(alice.publicKey.toBytes())!.lamports);
      assert.deepEqual(reopened.getSignatureStatus(tx.signature), ledger.getSignatureStatus(tx.signature));
      assert.equal(reopened.execute(tx).err, 'AlreadyProcessed');
      reopened.advanceSlot();
      assert.equal(earlier.has(reopened.latestBlockhash().blockhash), false, 'no blockhash is handed out twice');
      assert.equal(reopened.execute(transfer(reopened, alice, 1_000_000)).err, null);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
