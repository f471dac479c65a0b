/**
 * The landing benchmark's figures (bench:landing), from blocks and sends made here: what a
 * slot's lowest landed price is, overpayment and fees per sender, the calibration's largest
 * error, and the targets at load 2. The benchmark itself (minutes on a cluster) is not run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { seededWallet, transferWire } from '../../src/market/market-wires';
import { HOT_ACCOUNT } from '../../src/market/market';
import { priorityAndCost } from '../../src/leader/scheduler-priority';
import { parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';
import { BlockWatcher, slotLandedOf, type SlotLanded } from '../../bench/landing-blocks';
import type { Call } from '../../bench/landing-load';
import { advisedOverpayment, calibrationMaxErrorPts, senderFigures, targetChecks } from '../../bench/landing-market-figures';
import type { Calibration, LoadFigures, SenderFigures } from '../../bench/landing-market-shapes';
import { UserSender, type UserSent } from '../../bench/landing-senders';

const wallet = seededWallet('landing figures test payer');
const blockhash = Buffer.alloc(32, 9);
const wire = (price: number, tip = 0, to = Buffer.alloc(32, 3)) =>
  transferWire({
    from: wallet,
    to,
    lamports: 1_000_000 + price + tip,
    blockhash,
    price,
    tip: tip === 0 ? undefined : { account: Buffer.from(bs58.decode(JITO_TIP_ACCOUNTS[2]!)), lamports: tip },
  });
const entry = (tx: Buffer, err: unknown = null) => ({ transaction: [tx.toString('base64'), 'base64'], meta: { err } });

describe("the landing benchmark's figures", () => {
  it("reads a slot's lowest landed price leaving out failed and tipped transactions, the tips, and the hot account's share", () => {
    const block = {
      transactions: [
        entry(wire(2_000)),
        entry(wire(3_000, 0, HOT_ACCOUNT)),
        entry(wire(4_000, 0, HOT_ACCOUNT), { InstructionError: [0, 'Custom'] }), // failed: not counted
        entry(wire(10), { InstructionError: [0, 'Custom'] }), // failed: not a price that landed
        entry(wire(0, 25_000)), // a bundle's: won by its tip
        entry(wire(500)),
      ],
    };
    // The 500 transfer's priority, as a leader orders it: (2,500 kept of the base fee + ceil(500 × 600 / 10⁶)) × 10⁶ / (cost + 1).
    const lowestPriority = Number(priorityAndCost(parseWireTransaction(wire(500)) as WireTransaction).priority);
    assert.equal(lowestPriority, Math.floor((2_501 * 1e6) / (1_935 + 1)));
    assert.deepEqual(slotLandedOf(block), { lowestPriority, lowestPrice: 500, priced: 3, tips: [25_000], hotShare: 0.25 });
    assert.equal(slotLandedOf(null), null);
  });

  it('gives overpayment against the lowest priority of the same slot (and of prices), fees as 5,000 + the priority fee rounded up + the tip, and slots from send', () => {
    const sender = new UserSender(
      'advised',
      () => Promise.reject(new Error('unused')),
      () => Promise.reject(new Error('unused')),
      'test',
    );
    const sent = (slot: number, landedSlot: number | undefined, price: number, priority = price * 10): UserSent => ({
      signature: `s${sender.sent.length}`,
      blockhash: 'h',
      slot,
      landedSlot,
      accepted: true,
      failed: landedSlot === undefined ? undefined : false,
      price,
      priority,
      unitLimit: 600,
      tip: 0,
      hot: false,
      probability: 0.9,
      adviceMs: 3,
    });
    sender.sent.push(sent(100, 101, 3_000, 12_000), sent(100, 104, 1_000), sent(100, 120, 2_001), sent(100, undefined, 9_000));
    const slots = new Map<number, SlotLanded>([
      [101, { lowestPriority: 10_000, lowestPrice: 1_000, priced: 5, tips: [], hotShare: 0 }],
      [104, { lowestPriority: 10_000, lowestPrice: 1_000, priced: 5, tips: [], hotShare: 0 }],
      [120, { lowestPriority: 5_000, lowestPrice: 0, priced: 5, tips: [], hotShare: 0 }],
    ]);
    const figures = senderFigures(sender, 'test', slots, 8);
    assert.equal(figures.landed, 3);
    assert.equal(figures.landedPct, 75);
    assert.equal(figures.landedWithinPct, 50, 'two of four within 8 slots (1 and 4); 20 is not');
    assert.deepEqual(figures.slots, { p50: 4, p90: 20, p99: 20 });
    // Priorities 12,000, 10,000 and 20,010 against 10,000, 10,000 and 5,000: 1.2, 1 and 4.002; prices 3, 1 and unbounded.
    assert.deepEqual(
      figures.overpayment,
      { medianRatio: 1.2, priceMedianRatio: 3, samples: 3, lowestFree: 1, slotUnread: 0 },
      'priority ratios 1.2, 1 and 4.002; price ratios 3, 1 and unbounded',
    );
    // Medians: priority 12,000 over 10,000; price 2,001 over 1,000.
    assert.deepEqual(advisedOverpayment(sender, slots), { priority: 1.2, price: 2.001 });
    // 5,000 + ceil(3,000 × 600 / 10⁶) = 5,002; 5,000 + 1 (0.6 rounded up); 5,000 + ceil(1.2006) = 5,002.
    assert.equal(figures.feePerLandedLamports, Math.round((5_002 + 5_001 + 5_002) / 3));
    // Not within 8 slots: the one landed at 120, and the one never landed; the lowest landed price in slots 101-108 is 1,000.
    assert.deepEqual(
      figures.late.map((late) => [late.landedSlot, late.price, late.lowestLandedPriceNext]),
      [
        [120, 2_001, 1_000],
        [null, 9_000, 1_000],
      ],
    );
  });

  it('takes the largest calibration error over deciles of at least 100 samples only, and none without them', () => {
    const decile = (i: number, observed: number, samples: number) => ({
      from: i / 10,
      to: (i + 1) / 10,
      predicted: i / 10 + 0.05,
      observed,
      samples,
    });
    const calibration: Calibration = {
      withinSlots: 8,
      deciles: [decile(0, 0.5, 40), decile(4, 0.52, 100), decile(9, 0.88, 150)],
      brier: 0.2,
      samples: 290,
    };
    assert.equal(calibrationMaxErrorPts(calibration), 7, 'the 0.95 decile missed by 7 points; the 0.05 one has too few samples');
    assert.equal(calibrationMaxErrorPts({ ...calibration, deciles: [decile(0, 0.9, 99)] }), null);
    assert.equal(calibrationMaxErrorPts(null), null);
  });

  it('says a target is missed when (a) fails more than half of what (b) fails within 8 slots, and when the gateway reports no calibration', () => {
    const sender = (name: 'advised' | 'plain', within: number) => ({ sender: name, landedWithinPct: within }) as SenderFigures;
    const load = {
      load: 2,
      senders: [sender('advised', 90), sender('plain', 85)],
      advisedOverpayment: 1.2,
      adviceSource: 'getLandingEstimate',
      calibration: { gateway: null, gatewayNote: 'getLandingReport has no calibration section', client: null },
    } as unknown as LoadFigures;
    const checks = targetChecks([load]);
    assert.deepEqual(
      checks.map((check) => check.met),
      [true, false, true, false],
      JSON.stringify(checks),
    );
    assert.match(checks[1]!.detail, /\(a\) missed 10 %, \(b\) 15 %/);
    assert.equal(targetChecks([{ ...load, load: 1 }])[0]!.met, null, 'not measured at load 2');
    const decile = (from: number, predicted: number, observed: number, samples: number) => ({
      from,
      to: from + 0.1,
      predicted,
      observed,
      samples,
    });
    const withCalibration = (deciles: ReturnType<typeof decile>[], client: ReturnType<typeof decile>[] = []) =>
      targetChecks([
        {
          ...load,
          calibration: {
            gateway: { withinSlots: 8, deciles, brier: 0.1, samples: 500 },
            gatewayNote: null,
            client: { withinSlots: 8, deciles: client, brier: 0.1, samples: 500 },
          },
        } as unknown as LoadFigures,
      ])[3]!.met;
    assert.equal(
      withCalibration([decile(0.9, 0.94, 0.9, 300), decile(0.1, 0.15, 0.6, 99)]),
      true,
      'a decile under 100 samples is not judged',
    );
    assert.equal(withCalibration([decile(0.9, 0.94, 0.83, 300)]), false, '11 points off');
    assert.equal(withCalibration([decile(0.9, 0.94, 0.94, 99)]), false, 'no decile with 100 samples');
    assert.equal(
      withCalibration([decile(0.9, 0.94, 0.94, 300)], [decile(0.7, 0.75, 0.99, 200)]),
      false,
      "the senders' view judged too: advised 75 %, 99 % landed",
    );
    assert.equal(
      withCalibration([decile(0.9, 0.94, 0.94, 99)], [decile(0.9, 0.92, 0.95, 200)]),
      true,
      'either view may carry the judgement',
    );
  });

  it('reads blocks only of slots already ended, and counts as full those whose units reached 99 % of the limit', async () => {
    const asked: string[] = [];
    const units: Record<number, number> = { 10: 199_000, 11: 150_000, 12: 197_000, 13: 200_000 };
    const node = (async (method: string, params: unknown[] = []) => {
      asked.push(`${method} ${String(params[0] ?? '')}`.trim());
      if (method === 'getSlot') return 14;
      if (method === 'getBlock') return { transactions: [entry(wire(1_000))] };
      if (method === 'getSlotStats') return { units: units[params[0] as number], blockUnits: 200_000 };
      throw new Error(method);
    }) as Call;
    const watcher = new BlockWatcher(node, 10);
    await watcher.stop(13);
    assert.ok(!asked.includes('getBlock 14'), 'the slot being produced is not read');
    assert.deepEqual([...watcher.fill.keys()], [10, 11, 12, 13]);
    assert.equal(watcher.fullPct(10, 13), 50);
    assert.equal(watcher.fullPct(11, 11), 0);
    assert.equal(watcher.fullPct(20, 30), null);
  });
});
