/**
 * The local cluster's market of other senders: its transactions are real (web3.js decodes
 * them, the ledger runs them for the units they ask for, the cost model prices them as the
 * market assumes), its weather is the documented distribution, and at a given load it sends
 * that many times the block's units a slot, which fills the blocks and leaves the rest.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ComputeBudgetProgram, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { LocalLedger } from '../../src/ledger/local-ledger';
import { transactionCost } from '../../src/leader/cost-model';
import { tipOf } from '../../src/leader/block-auction';
import { burstsOf, FeeWeather, MEDIAN_PRICE } from '../../src/market/fee-weather';
import { HOT_ACCOUNT, Market, TIPPED_COST, TRANSFER_COST, type MarketPath } from '../../src/market/market';
import { LOADED_BYTES_LIMIT, marketWallet, TIPPED_UNITS, TRANSFER_UNITS, transferWire } from '../../src/market/market-wires';
import { ledgerSink, startMarket } from '../../src/market/start-market';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { restoreValidatedTransaction } from '../../src/validation/validate-transaction';

const SLOT_MS = 400;

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
};

describe('the market', () => {
  it('signs transfers that web3.js decodes as written and the ledger runs for the units they ask for, priced as the market assumes', () => {
    let clock = 0;
    const ledger = LocalLedger.open({ slotMs: SLOT_MS, contention: { blockUnits: 1_000_000, accountUnits: 400_000 }, now: () => clock });
    const from = marketWallet(0);
    const to = marketWallet(1).publicKey;
    ledger.fundAccounts([from.publicKey, to], 10_000_000_000n);
    const blockhash = Buffer.from(bs58.decode(ledger.latestBlockhash().blockhash));
    const tipAccount = Buffer.from(bs58.decode(JITO_TIP_ACCOUNTS[2]!));
    const plain = transferWire({ from, to, lamports: 5, blockhash, price: 1_234 });
    const tipped = transferWire({ from, to, lamports: 6, blockhash, price: 0, tip: { account: tipAccount, lamports: 7_000 } });

    const decoded = Transaction.from(plain);
    assert.ok(decoded.verifySignatures(), 'the signature verifies');
    const expected = [
      ComputeBudgetProgram.setComputeUnitLimit({ units: TRANSFER_UNITS }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_234 }),
      // web3.js has no helper for SetLoadedAccountsDataSizeLimit (4, a u32): written from the instruction's layout.
      new TransactionInstruction({
        programId: ComputeBudgetProgram.programId,
        keys: [],
        data: Buffer.from([4, ...u32(LOADED_BYTES_LIMIT)]),
      }),
      SystemProgram.transfer({ fromPubkey: new PublicKey(from.publicKey), toPubkey: new PublicKey(to), lamports: 5 }),
    ];
    assert.equal(decoded.instructions.length, expected.length);
    decoded.instructions.forEach((ix, i) => {
      const want = expected[i]!;
      assert.ok(ix.programId.equals(want.programId), `instruction ${i}'s program`);
      assert.deepEqual(Buffer.from(ix.data), Buffer.from(want.data), `instruction ${i}'s data`);
      assert.deepEqual(
        ix.keys.map((k) => k.pubkey.toBase58()),
        want.keys.map((k) => k.pubkey.toBase58()),
      );
    });

    const plainTx = restoreValidatedTransaction(plain);
    const tippedTx = restoreValidatedTransaction(tipped);
    assert.equal(transactionCost(plainTx.wire).total, TRANSFER_COST);
    assert.equal(transactionCost(tippedTx.wire).total, TIPPED_COST);
    assert.equal(tipOf([tippedTx.wire]), 7_000n);
    const ran = ledger.execute(plainTx);
    assert.equal(ran.err, null);
    assert.equal(ran.unitsConsumed, TRANSFER_UNITS, 'the limit asked for is what it uses');
    const tipBefore = ledger.getAccount(tipAccount)?.lamports ?? 0n;
    const ranTipped = ledger.execute(tippedTx);
    assert.equal(ranTipped.err, null);
    assert.equal(ranTipped.unitsConsumed, TIPPED_UNITS);
    assert.equal(ledger.getAccount(tipAccount)!.lamports - tipBefore, 7_000n);
    clock++;
  });

  it('draws from the documented weather: repeatable by seed, a free tenth, a hot share near 15 %, a median that drifts but returns', () => {
    const a = new FeeWeather(7);
    const b = new FeeWeather(7);
    let free = 0;
    let hot = 0;
    let outsideBurst = 0;
    const medians: number[] = [];
    for (let slot = 0; slot < 4_000; slot++) {
      a.nextSlot();
      b.nextSlot();
      medians.push(a.median);
      for (let i = 0; i < 10; i++) {
        const draw = a.draw();
        assert.deepEqual(b.draw(), draw);
        if (a.bursting) continue;
        b.uniform();
        a.uniform();
        outsideBurst++;
        if (draw.price === 0) free++;
        if (draw.hot) hot++;
      }
    }
    assert.ok(Math.abs(free / outsideBurst - 0.1) < 0.02, `free share ${free / outsideBurst}`);
    assert.ok(Math.abs(hot / outsideBurst - 0.15) < 0.02, `hot share ${hot / outsideBurst}`);
    const sorted = [...medians].sort((x, y) => x - y);
    assert.ok(sorted[0]! < MEDIAN_PRICE * 0.9 && sorted.at(-1)! > MEDIAN_PRICE * 1.1, 'the median drifts');
    assert.ok(
      sorted[Math.floor(sorted.length / 2)]! > MEDIAN_PRICE / 2 && sorted[Math.floor(sorted.length / 2)]! < MEDIAN_PRICE * 2,
      'and returns',
    );
    for (let i = 0; i < 1_000; i++) assert.ok(a.tip() >= 1_000, 'a tip is never under the engine minimum');
  });

  it('has the same slots (median, bursts) at every load for one seed, whatever each slot draws, and another weather for another seed', () => {
    const slotsOf = (seed: number, drawsPerSlot: number) => {
      const weather = new FeeWeather(seed);
      const slots: [number, number][] = [];
      for (let slot = 0; slot < 2_000; slot++) {
        weather.nextSlot();
        slots.push([weather.median, weather.burstSlotsLeft]);
        for (let i = 0; i < drawsPerSlot; i++) weather.draw();
        if (drawsPerSlot > 0) weather.tip();
      }
      return slots;
    };
    const quiet = slotsOf(3, 0);
    assert.deepEqual(slotsOf(3, 50), quiet);
    assert.deepEqual(slotsOf(3, 400), quiet);
    assert.notDeepEqual(slotsOf(4, 50), quiet);
    // burstsOf reads the same weather: each burst it names is one in those slots, of the length they show.
    const bursts = burstsOf(3, 2_000);
    assert.ok(bursts.length >= 1, 'a burst in 2,000 slots at 1/400 a slot');
    for (const { start, slots } of bursts) {
      assert.equal(quiet[start - 1]![1], slots, `the burst at slot ${start}`);
      assert.ok(slots >= 20 && slots <= 60);
      assert.equal(quiet[start - 2]?.[1] ?? 0, 0, 'none the slot before');
    }
    assert.equal(quiet.filter(([, left], i) => left > 0 && (quiet[i - 1]?.[1] ?? 0) === 0).length, bursts.length);
  });

  it("sends the load times the block's units a slot, a tenth as tipped bundles and the rest split between the TPUs, the RPC node and the engine", () => {
    const sent: Record<MarketPath | 'bundle', number> = { tpu: 0, rpc: 0, engine: 0, bundle: 0 };
    let units = 0;
    const view = {
      currentSlot: 100,
      latestBlockhash: () => bs58.encode(Buffer.alloc(32, 1)),
      leaderAt: (slot: number) => (slot < 104 ? 'A' : 'B'),
    };
    const market = new Market(
      view,
      {
        sendTransaction: (wire, path, leaders) => {
          assert.deepEqual(leaders, ['A', 'B']);
          sent[path]++;
          units += transactionCost(restoreValidatedTransaction(wire).wire).total;
        },
        sendBundle: (wires) => {
          sent.bundle++;
          units += transactionCost(restoreValidatedTransaction(wires[0]!).wire).total;
        },
      },
      { load: 2, blockUnits: 200_000, slotMs: SLOT_MS },
    );
    const slots = 20;
    for (let part = 0; part < slots * 8; part++) market.sendPart();
    assert.ok(Math.abs(units / slots - 400_000) < TIPPED_COST, `${units / slots} units a slot`);
    const total = sent.tpu + sent.rpc + sent.engine + sent.bundle;
    assert.ok(Math.abs(sent.bundle / total - 0.1) < 0.03, `bundles ${sent.bundle / total}`);
    assert.ok(Math.abs(sent.tpu / (total - sent.bundle) - 0.5) < 0.04);
    assert.ok(Math.abs(sent.rpc / (total - sent.bundle) - 0.35) < 0.04);
    assert.equal(market.counts.transactions + market.counts.bundles, total);
  });

  it('at twice the capacity fills the blocks, drops what the leaders could not pack, and lands the higher fees', () => {
    let clock = 0;
    const ledger = LocalLedger.open({ slotMs: SLOT_MS, contention: { blockUnits: 100_000, accountUnits: 40_000 }, now: () => clock });
    startMarket(ledger, 2, SLOT_MS, { seed: 3 })!.stop(); // funds the wallets; the market below is driven by hand
    const priceOf = (wire: Buffer) => Number(restoreValidatedTransaction(wire).wire.instructions[1]!.data.readBigUInt64LE(1));
    const sentPrices: number[] = [];
    const sink = ledgerSink(ledger);
    const view = {
      get currentSlot() {
        return ledger.currentSlot;
      },
      latestBlockhash: () => ledger.latestBlockhash().blockhash,
      leaderAt: (slot: number) => ledger.schedule.leaderAt(slot),
    };
    const market = new Market(
      view,
      {
        sendTransaction: (wire, path, leaders) => {
          sentPrices.push(priceOf(wire));
          sink.sendTransaction(wire, path, leaders);
        },
        sendBundle: (wires) => sink.sendBundle(wires),
      },
      { load: 2, blockUnits: 100_000, slotMs: SLOT_MS, seed: 3 },
    );
    const first = ledger.currentSlot;
    for (let slot = 0; slot < 24; slot++) {
      for (let part = 0; part < 8; part++) {
        market.sendPart();
        clock += SLOT_MS / 8;
        ledger.producer!.pump();
      }
      ledger.advanceSlot();
    }
    let fill = 0;
    let windowEnded = 0;
    for (let slot = first + 1; slot < first + 24; slot++) {
      const stats = ledger.slotStats(slot)!;
      fill += stats.units / stats.blockUnits;
      windowEnded += stats.dropped.windowEnded;
    }
    assert.ok(fill / 23 > 0.9, `blocks ${((fill / 23) * 100).toFixed(0)} % full`);
    assert.ok(windowEnded > 0, "what the leaders could not pack was dropped at their windows' end");
    const landedPrices: number[] = [];
    for (const [, landed] of ledger.history.newestFirst()) {
      if (restoreValidatedTransaction(landed.wire).wire.instructions.length === 5) continue; // a tipped bundle's: it pays by its tip
      landedPrices.push(priceOf(landed.wire));
    }
    const median = (list: number[]) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)]!;
    // Half of what is sent fits: packed by priority, what lands is about the upper half of what was sent.
    assert.ok(
      median(landedPrices) > 1.5 * median(sentPrices),
      `the median landed price ${median(landedPrices)} against ${median(sentPrices)} sent`,
    );
    assert.ok(ledger.getAccount(HOT_ACCOUNT) !== null);
  });
});
