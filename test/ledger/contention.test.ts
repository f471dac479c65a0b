/**
 * The embedded ledger under contention (a block limit set): real transfers, signed and
 * executed, scheduled by each leader by Agave's priority into blocks of limited units. The
 * slots are moved on by hand, and the pacer's clock too: nothing is packed until the test
 * moves the clock past the slot's fill time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ComputeBudgetProgram, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { LocalLedger } from '../../src/ledger/local-ledger';
import { contentionOf, type ContentionSettings } from '../../src/ledger/block-producer';
import { LEDGER_RPC_METHODS } from '../../src/ledger/ledger-rpc';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { computeBundleId } from '../../src/core/bundle-id';
import { transactionCost } from '../../src/leader/cost-model';
import { validateTransaction, type ValidatedTransaction } from '../../src/validation/validate-transaction';

/** 60 ms slots: the pacer fills the block over the first 10. */
const SLOT_MS = 60;
/** The pacer's clock, moved by the tests. */
let clock = 0;

function ledgerWith(contention: ContentionSettings) {
  const ledger = LocalLedger.open({ slotMs: SLOT_MS, contention, now: () => clock });
  // Start at a leader window's first slot, so that four slots share one leader.
  while (ledger.currentSlot % 4 !== 0) ledger.advanceSlot();
  return ledger;
}

function payers(ledger: LocalLedger, count: number): Keypair[] {
  return Array.from({ length: count }, () => {
    const payer = Keypair.generate();
    ledger.airdrop(payer.publicKey.toBytes(), BigInt(LAMPORTS_PER_SOL));
    return payer;
  });
}

/** A transfer asking for 1,000 compute units at `microLamports` per unit. */
function transfer(
  ledger: LocalLedger,
  from: Keypair,
  microLamports: number,
  to: PublicKey = Keypair.generate().publicKey,
): ValidatedTransaction {
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: ledger.latestBlockhash().blockhash }).add(
    ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports }),
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: 1_000_000 }),
  );
  tx.sign(from);
  const result = validateTransaction(tx.serialize().toString('base64'), '');
  assert.ok(result.ok);
  return result.value;
}

/** Moves the clock past the pacer's fill time and lets the leader pack what it holds. */
function packNow(ledger: LocalLedger): void {
  clock += SLOT_MS;
  ledger.producer!.pump();
}

const landedIn = (ledger: LocalLedger, slot: number) => ledger.history.block(slot)!.signatures;
const stats = (ledger: LocalLedger, slot: number) => (LEDGER_RPC_METHODS.getSlotStats!(ledger, [slot]) as { result: any }).result;

describe('the embedded ledger under contention', () => {
  it('without a block limit executes every transaction as it arrives (contention is off by default)', () => {
    assert.equal(contentionOf({ blockUnits: 0, market: 0, engineStakePercent: 90 }), undefined);
    assert.equal(contentionOf({ blockUnits: 0, market: 2, engineStakePercent: 90 })?.blockUnits, 200_000);
    assert.equal(contentionOf({ blockUnits: 60_000, market: 2, engineStakePercent: 90 })?.accountUnits, 24_000);
    const ledger = LocalLedger.open({ slotMs: SLOT_MS });
    const [payer] = payers(ledger, 1);
    const outcome = ledger.receive(transfer(ledger, payer!, 1), { path: 'private' });
    assert.equal(outcome?.included, true);
    assert.equal(ledger.producer, undefined);
    assert.equal(stats(ledger, ledger.currentSlot), null);
  });

  it("reports what a transaction cost the block in its meta's costUnits, as Agave does: the units it used, not the limit it asked", () => {
    const ledger = ledgerWith({ blockUnits: 60_000, accountUnits: 60_000 });
    const [payer] = payers(ledger, 1);
    const tx = transfer(ledger, payer!, 1_000);
    ledger.receive(tx, { path: 'private' });
    packNow(ledger);
    const answer = LEDGER_RPC_METHODS.getTransaction!(ledger, [tx.signature, { encoding: 'base64' }]) as { result: any };
    // 720 + 2 x 300 + 26 / 4 + 450 used of the 1,000 asked + 8 for the accounts it loaded (estimated 18,710).
    assert.equal(answer.result.meta.costUnits, 1_784);
    assert.equal(answer.result.meta.computeUnitsConsumed, 450);
    assert.equal(stats(ledger, ledger.currentSlot).units, 1_784);
  });

  it('packs the highest priorities first and holds the rest, which the leader packs in its next slot', () => {
    // Each transfer is estimated at 18,710 units (1,000 asked for and 16,384 for 64 MiB of loaded data)
    // and charged about 1,800 once run; 60,000 units take the first three by estimate, then more as the charges shrink.
    const ledger = ledgerWith({ blockUnits: 60_000, accountUnits: 60_000 });
    const people = payers(ledger, 30);
    const txs = people.map((payer, i) => transfer(ledger, payer, (i + 1) * 1_000));
    assert.equal(transactionCost(txs[0]!.wire).total, 18_710);
    const slot = ledger.currentSlot;
    for (const tx of txs) assert.equal(ledger.receive(tx, { path: 'private' }), undefined, 'queued for the leader');
    packNow(ledger);
    const packed = landedIn(ledger, slot);
    const byPriority = txs.map((tx) => tx.signature).reverse();
    assert.ok(packed.length > 3 && packed.length < 30, `${packed.length} packed`);
    assert.deepEqual(packed, byPriority.slice(0, packed.length), 'packed in priority order, highest first');
    const figures = stats(ledger, slot);
    assert.equal(figures.packed, packed.length);
    assert.ok(figures.units <= 60_000 && figures.units > 60_000 - 18_710, `${figures.units} units`);
    assert.ok(figures.held.WouldExceedBlockMaxLimit > 0);
    ledger.advanceSlot();
    packNow(ledger);
    assert.deepEqual(landedIn(ledger, slot + 1), byPriority.slice(packed.length, packed.length + landedIn(ledger, slot + 1).length));
    assert.ok(landedIn(ledger, slot + 1).length > 0);
  });

  it("under twice the buffer's room drops the lowest priorities first", () => {
    const ledger = ledgerWith({ blockUnits: 60_000_000, accountUnits: 24_000_000, bufferCapacity: 10 });
    const people = payers(ledger, 20);
    const txs = people.map((payer, i) => transfer(ledger, payer, 20_000 - i * 1_000));
    const slot = ledger.currentSlot;
    for (const tx of txs) ledger.receive(tx, { path: 'private' });
    packNow(ledger);
    assert.deepEqual(new Set(landedIn(ledger, slot)), new Set(txs.slice(0, 10).map((tx) => tx.signature)));
    for (const tx of txs.slice(10)) assert.equal(ledger.getSignatureStatus(tx.signature), undefined, 'the lowest were dropped');
    assert.equal(stats(ledger, slot).dropped.bufferFull, 10);
  });

  it('binds the per-account limit on a hot account while other accounts keep landing', () => {
    const ledger = ledgerWith({ blockUnits: 200_000, accountUnits: 25_000 });
    const hot = Keypair.generate().publicKey;
    const people = payers(ledger, 16);
    // The hot transfers pay more than the others: without the account's limit they would fill the block first.
    const toHot = people.slice(0, 8).map((payer) => transfer(ledger, payer, 50_000, hot));
    const elsewhere = people.slice(8).map((payer) => transfer(ledger, payer, 1_000));
    const slot = ledger.currentSlot;
    for (const tx of [...toHot, ...elsewhere]) ledger.receive(tx, { path: 'private' });
    packNow(ledger);
    const landed = new Set(landedIn(ledger, slot));
    const hotLanded = toHot.filter((tx) => landed.has(tx.signature)).length;
    // 18,710 estimated on top of what the hot account was charged (about 1,800 each) fits 25,000 four times.
    assert.equal(hotLanded, 4, `${hotLanded} hot transfers landed`);
    assert.ok(stats(ledger, slot).held.WouldExceedAccountMaxLimit > 0);
    assert.equal(elsewhere.filter((tx) => landed.has(tx.signature)).length, 8, 'the cheaper transfers elsewhere all landed');
  });

  it('drops what a leader did not pack when its window ends, when it leads again only more than 20 slots later', () => {
    const ledger = ledgerWith({ blockUnits: 20_000, accountUnits: 20_000 });
    // A window whose leader does not lead again within the 20 slots after it.
    const leadsSoonAfter = (slot: number) => ledger.schedule.leaders(slot + 4, 21).includes(ledger.schedule.leaderAt(slot));
    while (leadsSoonAfter(ledger.currentSlot)) for (let i = 0; i < 4; i++) ledger.advanceSlot();
    const people = payers(ledger, 6);
    const txs = people.map((payer, i) => transfer(ledger, payer, (i + 1) * 1_000));
    const first = ledger.currentSlot;
    for (const tx of txs) ledger.receive(tx, { path: 'private' });
    // One transfer a slot: 18,710 estimated fits once in 20,000, and the ~1,800 it is charged leaves too little for another.
    for (let slot = first; slot < first + 4; slot++) {
      if (slot > first) ledger.advanceSlot();
      packNow(ledger);
      assert.deepEqual(landedIn(ledger, slot), [txs[5 - (slot - first)]!.signature]);
    }
    const leader = ledger.schedule.leaderAt(first);
    assert.equal(ledger.producer!.buffered(leader), 2);
    ledger.advanceSlot();
    assert.equal(ledger.producer!.buffered(leader), 0);
    assert.equal(stats(ledger, first + 4).dropped.windowEnded, 2);
    for (const tx of txs.slice(0, 2)) assert.equal(ledger.getSignatureStatus(tx.signature), undefined);
  });

  it('refuses at once what the cluster would never include: an unknown blockhash, a transaction already processed', () => {
    const ledger = ledgerWith({ blockUnits: 60_000, accountUnits: 60_000 });
    const [payer] = payers(ledger, 1);
    const tx = transfer(ledger, payer!, 1_000);
    const unknown = validateTransaction(
      (() => {
        const t = new Transaction({ feePayer: payer!.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() }).add(
          SystemProgram.transfer({ fromPubkey: payer!.publicKey, toPubkey: payer!.publicKey, lamports: 1 }),
        );
        t.sign(payer!);
        return t.serialize().toString('base64');
      })(),
      '',
    );
    assert.ok(unknown.ok);
    assert.equal(ledger.receive(unknown.value, { path: 'private' })?.err, 'BlockhashNotFound');
    assert.equal(ledger.execute(tx).included, true);
    assert.equal(ledger.receive(tx, { path: 'private' })?.err, 'AlreadyProcessed');
  });

  it('forwards what the RPC node receives to the current and the next leader, and again every 2 s to the leaders of that moment until it lands', () => {
    // A block too small for anything: nothing lands, so the forwarding is seen in the buffers.
    const ledger = ledgerWith({ blockUnits: 1_000, accountUnits: 1_000 });
    const [payer] = payers(ledger, 1);
    const tx = transfer(ledger, payer!, 1_000);
    const slot = ledger.currentSlot;
    const current = ledger.schedule.leaderAt(slot);
    const next = ledger.schedule.leaderAt(slot + 4);
    ledger.receive(tx, { path: 'public' });
    assert.equal(ledger.producer!.buffered(current), 1);
    assert.equal(ledger.producer!.buffered(next), 1);
    // 2 s of 60 ms slots: the 34th slot after it was received forwards it again, to the leaders of then.
    for (let i = 0; i < 34; i++) ledger.advanceSlot();
    const then = [ledger.schedule.leaderAt(slot + 34), ledger.schedule.leaderAt(slot + 38)];
    for (const leader of then) assert.equal(ledger.producer!.buffered(leader), 1, `forwarded again to ${leader}`);
  });

  it("answers a slot's figures by getSlotStats and refuses a slot that is not a non-negative integer", () => {
    const ledger = ledgerWith({ blockUnits: 1_000, accountUnits: 1_000 });
    assert.equal(stats(ledger, ledger.currentSlot).blockUnits, 1_000);
    assert.equal(stats(ledger, 0), null, 'a slot never produced here');
    for (const bad of [[-1], ['5'], [1.5], [], [null]]) {
      const answer = LEDGER_RPC_METHODS.getSlotStats!(ledger, bad) as { error?: { code: number; message: string } };
      assert.equal(answer.error?.code, -32602, JSON.stringify(bad));
      assert.match(answer.error!.message, /params\[0\] must be a slot/);
    }
  });

  it('drops a transaction whose blockhash expired while it waited, when its leader reaches it', () => {
    // One validator leads every slot, so nothing is dropped for a window's end; a block too small holds it.
    const ledger = LocalLedger.open({
      slotMs: SLOT_MS,
      leaders: [Keypair.generate().publicKey.toBase58()],
      contention: { blockUnits: 1_000, accountUnits: 1_000 },
      now: () => clock,
    });
    const [payer] = payers(ledger, 1);
    const tx = transfer(ledger, payer!, 1_000);
    ledger.receive(tx, { path: 'private' });
    const expiredAt = ledger.currentSlot + 151;
    while (ledger.currentSlot < expiredAt) {
      ledger.advanceSlot();
      packNow(ledger);
    }
    assert.equal(stats(ledger, expiredAt).dropped.expired, 1);
    assert.equal(ledger.producer!.buffered(ledger.schedule.leaderAt(expiredAt)), 0);
  });

  describe('bundles', () => {
    /** A one-transaction bundle: a transfer and a tip of `tip` lamports (estimated at 24,010 units). */
    function bundle(ledger: LocalLedger, from: Keypair, tip: number) {
      const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: ledger.latestBlockhash().blockhash }).add(
        SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
        SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: new PublicKey(JITO_TIP_ACCOUNTS[0]!), lamports: tip }),
      );
      tx.sign(from);
      const result = validateTransaction(tx.serialize().toString('base64'), '');
      assert.ok(result.ok);
      return { id: computeBundleId([result.value.signature]), txs: [result.value] };
    }

    /** A ledger whose current slot's leader runs the block engine (or not), at a window's first slot. */
    function engineLedger(runsEngine: boolean, blockUnits = 100_000) {
      const ledger = ledgerWith({ blockUnits, accountUnits: blockUnits, engineShare: 0.5 });
      while (ledger.producer!.engineLeaders.has(ledger.schedule.leaderAt(ledger.currentSlot)) !== runsEngine) {
        for (let i = 0; i < 4; i++) ledger.advanceSlot();
      }
      return ledger;
    }

    const inflight = (ledger: LocalLedger, id: string) =>
      (LEDGER_RPC_METHODS.getInflightBundleStatuses!(ledger, [[id]]) as { result: { value: any[] } }).result.value[0];

    it("lands the higher tip per unit when the bundles' share of the block holds one, and the lower loses the auction and says so", () => {
      // 100,000 units: the bundles' quarter holds one bundle of 24,010.
      const ledger = engineLedger(true);
      const [a, b] = payers(ledger, 2);
      const high = bundle(ledger, a!, 50_000);
      const low = bundle(ledger, b!, 20_000);
      ledger.advanceSlot();
      const slot = ledger.currentSlot;
      assert.equal(ledger.receiveBundle(low.id, low.txs), undefined);
      assert.equal(ledger.receiveBundle(high.id, high.txs), undefined);
      assert.equal(inflight(ledger, low.id).status, 'Pending');
      packNow(ledger);
      assert.deepEqual(landedIn(ledger, slot), [high.txs[0]!.signature]);
      assert.equal(inflight(ledger, high.id).status, 'Landed');
      assert.equal(inflight(ledger, low.id).status, 'Pending', 'it bids once more');
      packNow(ledger);
      const lost = inflight(ledger, low.id);
      assert.equal(lost.status, 'Failed');
      // 50,000 x 1,000,000 / (24,010 + 1): the winner's rate.
      assert.match(
        lost.err,
        /^lost the block engine's auction: its tip of 20000 lamports for 24010 units, where the lowest rate that won paid 2082378 lamports per million units$/,
      );
      assert.equal(ledger.getSignatureStatus(low.txs[0]!.signature), undefined);
    });

    it('waits for a leader that runs the block engine: none lands in the slot of one that does not', () => {
      const ledger = engineLedger(false);
      const [a] = payers(ledger, 1);
      const only = bundle(ledger, a!, 50_000);
      ledger.receiveBundle(only.id, only.txs);
      for (let i = 0; i < 4; i++) {
        packNow(ledger);
        if (i < 3) ledger.advanceSlot();
      }
      assert.equal(inflight(ledger, only.id).status, 'Pending');
      while (!ledger.producer!.engineLeaders.has(ledger.schedule.leaderAt(ledger.currentSlot))) ledger.advanceSlot();
      const slot = ledger.currentSlot;
      packNow(ledger);
      assert.equal(inflight(ledger, only.id).status, 'Landed');
      assert.equal(ledger.getBundle(only.id)!.slot, slot);
    });

    it("refuses a bundle whose tip is under the block engine's 1,000 lamports, saying so", () => {
      const ledger = engineLedger(true);
      const [a] = payers(ledger, 1);
      const stingy = bundle(ledger, a!, 999);
      assert.deepEqual(ledger.receiveBundle(stingy.id, stingy.txs), {
        refused: "its tip of 999 lamports is below the block engine's minimum of 1000",
      });
      assert.equal(inflight(ledger, stingy.id).status, 'Failed');
    });
  });
});
