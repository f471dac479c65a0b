/**
 * getLandingEstimate through the gateway, on an embedded ledger congested by the market:
 * with no outcomes it answers the market's percentile for the chance asked (confidence none);
 * once the gateway's own transfers, sent at prices from nothing to far above the market, have
 * landed or missed, it rests on them: dearer advice for a higher chance, a route of its own,
 * the landing report's calibration scored; bundles get a tip; bad params get -32602; each
 * estimate (and each getPriorityFeeEstimate) is a read against the key's reads per second.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import bs58 from 'bs58';
import { resolveConfig } from '../../src/config/config';
import { HOT_ACCOUNT } from '../../src/market/market';
import { seededWallet, transferWire } from '../../src/market/market-wires';
import { openStore } from '../../src/stores/database/open-store';
import { KEY_STORE } from '../../src/stores/store-adapters';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { rpc, sendTransaction } from '../helpers/rpc';

describe('getLandingEstimate', () => {
  let gw: TestGateway;
  before(async () => {
    // Ten market transfers a block, sent at twice that: congested from the first slots.
    gw = await startTestGateway({ market: 2, blockUnits: 20_000, slotMs: 100 });
    await sleep(1_000);
  });
  after(() => gw.close());

  const estimate = async (request: unknown) => {
    const answer = await rpc(gw.url, gw.key, 'getLandingEstimate', [request]);
    assert.equal(answer.status, 200);
    return answer.body;
  };
  const transfer = { accountKeys: [], computeUnits: 600 };

  it('with no outcomes of its own answers the market percentile of the chance asked, with confidence none', async () => {
    const { result } = await estimate({ ...transfer, probability: 0.9, withinSlots: 8 });
    assert.equal(result.evidence.outcomes, 0);
    assert.equal(result.evidence.confidence, 'none');
    // The chance at the price answered: the one asked for, or a little more where the fee's rounding lifts it.
    assert.ok(result.probability >= 0.9 && result.probability < 0.93, String(result.probability));
    assert.equal(result.withinSlots, 8);
    assert.equal(result.reachable, true);
    // The market's priorities at the 90th percentile (of the 20 blocks, or of the newest block when it is dearer), and a
    // price that gives this transaction that priority.
    const { priority, cost, computeUnits, market } = result.evidence;
    assert.ok(priority >= market.percentiles.p90, JSON.stringify(result.evidence));
    // No transaction given: one signature, the fee payer's write lock, 600 units and the default 64 MiB loaded-data limit.
    assert.deepEqual([cost, computeUnits], [720 + 300 + 600 + 16_384, 600]);
    const priorityOf = (price: number) => Math.floor(((2_500 + Math.ceil((price * 600) / 1e6)) * 1e6) / (cost + 1));
    assert.ok(priorityOf(result.microLamportsPerComputeUnit) > priority, 'the price advised gives more than the priority advised');
    assert.ok(priorityOf(result.microLamportsPerComputeUnit - 1) <= priority, 'and is the lowest that does');
    // One signature and 600 units at that price.
    assert.equal(result.feeLamports, 5_000 + Math.ceil((result.microLamportsPerComputeUnit * 600) / 1e6));
  });

  it("rests on the gateway's own outcomes once they are known: dearer for a higher chance, per route, and scored in the landing report", async () => {
    const wallets = Array.from({ length: 16 }, (_, i) => seededWallet(`landing estimate test ${i}`));
    gw.app.ledger!.fundAccounts(
      wallets.map((w) => w.publicKey),
      10_000_000_000n,
    );
    let sent = 0;
    for (let tick = 0; tick < 25; tick++) {
      const { result } = (await rpc(gw.url, gw.key, 'getLatestBlockhash')).body;
      const blockhash = Buffer.from(bs58.decode(result.value.blockhash));
      const answers = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          // Log-uniform from 1 to 1,000,000 micro-lamports a unit: from far under the market to far over it.
          const price = Math.round(10 ** (((tick * 10 + i) * 0.37) % 6));
          const wire = transferWire({ from: wallets[i]!, to: crypto.randomBytes(32), lamports: 1_000_000, blockhash, price });
          return sendTransaction(gw.url, gw.key, wire.toString('base64'));
        }),
      );
      for (const answer of answers) assert.equal(answer.body.error, undefined, JSON.stringify(answer.body));
      sent += answers.length;
      await sleep(100);
    }
    assert.equal(sent, 250);
    let result: any;
    for (let waited = 0; waited < 20_000; waited += 500) {
      result = (await estimate({ ...transfer, probability: 0.9, withinSlots: 8 })).result;
      if (result.evidence.outcomes >= 240) break;
      await sleep(500);
    }
    assert.ok(result.evidence.outcomes >= 240, JSON.stringify(result.evidence));
    assert.ok(result.evidence.landedWithin > 0 && result.evidence.landedWithin < result.evidence.outcomes, JSON.stringify(result.evidence));
    assert.notEqual(result.evidence.confidence, 'none');
    assert.ok(result.byRoute.embedded.outcomes >= 240, JSON.stringify(result.byRoute));
    const low = (await estimate({ ...transfer, probability: 0.2, withinSlots: 8 })).result;
    assert.ok(
      low.microLamportsPerComputeUnit < result.microLamportsPerComputeUnit,
      `${low.microLamportsPerComputeUnit} for 0.2, ${result.microLamportsPerComputeUnit} for 0.9`,
    );
    assert.ok(low.evidence.marketRank < result.evidence.marketRank);
    const report = (await rpc(gw.url, gw.key, 'getLandingReport', [{ since: '1h' }])).body.result;
    assert.equal(report.calibration.withinSlots, 8);
    assert.ok(report.calibration.samples >= 200, JSON.stringify(report.calibration));
    assert.equal(
      report.calibration.deciles.reduce((n: number, d: { samples: number }) => n + d.samples, 0),
      report.calibration.samples,
    );
    assert.ok(report.calibration.brier > 0 && report.calibration.brier < 0.25, JSON.stringify(report.calibration));
    // What the landed ones paid: at least the signature's 5,000, and never under the lowest priority of their block.
    // How many of the 250 land in blocks the advice reads moves with the machine's load (19 seen on a loaded run).
    assert.ok(report.fees.samples >= 15 && report.fees.samples <= result.evidence.landedWithin + 10, JSON.stringify(report.fees));
    assert.ok(
      report.fees.feeLamports.p50 >= 5_000 && report.fees.feeLamports.p99 >= report.fees.feeLamports.p50,
      JSON.stringify(report.fees),
    );
    assert.ok(report.fees.overpayment.p50 >= 1 && report.fees.overpayment.p90 >= report.fees.overpayment.p50, JSON.stringify(report.fees));
  });

  it("advises a bundle's tip, at least the block engine's minimum, and no priority fee", async () => {
    const { result } = await estimate({ ...transfer, probability: 0.5, withinSlots: 8, bundle: true });
    assert.equal(result.microLamportsPerComputeUnit, 0);
    assert.ok(result.tipLamports >= 1_000, JSON.stringify(result));
    assert.equal(result.feeLamports, 5_000 + result.tipLamports);
  });

  it('refuses bad params with -32602 naming the parameter', async () => {
    const hot = bs58.encode(HOT_ACCOUNT);
    for (const [params, message] of [
      [
        [],
        /^getLandingEstimate takes \[\{transaction \(base64\) or accountKeys and computeUnits, probability, withinSlots, bundle\?\}\]: got 0 params$/,
      ],
      [
        [{ accountKeys: [hot], computeUnits: 600, probability: 1, withinSlots: 8 }],
        /^params\[0\]\.probability must be a number from 0\.01 to 0\.99 /,
      ],
      [[{ accountKeys: [hot], computeUnits: 600, probability: '0.9', withinSlots: 8 }], /^params\[0\]\.probability must be a number/],
      [
        [{ accountKeys: [hot], computeUnits: 600, probability: 0.9, withinSlots: 151 }],
        /^params\[0\]\.withinSlots must be an integer from 1 to 150; got 151$/,
      ],
      [[{ accountKeys: [hot], computeUnits: 600, probability: 0.9, withinSlots: 2.5 }], /^params\[0\]\.withinSlots must be an integer/],
      [[{ accountKeys: [hot], probability: 0.9, withinSlots: 8 }], /^params\[0\]\.computeUnits must be an integer from 1 to 1400000 /],
      [[{ accountKeys: [hot], computeUnits: 1_400_001, probability: 0.9, withinSlots: 8 }], /^params\[0\]\.computeUnits must be/],
      [
        [{ accountKeys: Array.from({ length: 129 }, () => hot), computeUnits: 600, probability: 0.9, withinSlots: 8 }],
        /^params\[0\]\.accountKeys has 129 accounts; at most 128$/,
      ],
      [
        [{ accountKeys: ['nope'], computeUnits: 600, probability: 0.9, withinSlots: 8 }],
        /^params\[0\]\.accountKeys\[0\] is not a base58 account address$/,
      ],
      [[{ transaction: 'AAAA', probability: 0.9, withinSlots: 8 }], /^params\[0\]\.transaction does not decode as a transaction: /],
      [[{ transaction: '!!!', probability: 0.9, withinSlots: 8 }], /^params\[0\]\.transaction is not valid base64: /],
      [[{ transaction: 'A'.repeat(2_000), probability: 0.9, withinSlots: 8 }], /^params\[0\]\.transaction is 2000 characters of base64/],
      [
        [{ transaction: 'AAAA', accountKeys: [hot], probability: 0.9, withinSlots: 8 }],
        /^params\[0\] takes transaction, or accountKeys and computeUnits, not both$/,
      ],
      [[{ probability: 0.9, withinSlots: 8 }], /needs transaction, or accountKeys and computeUnits$/],
      [
        [{ ...{ accountKeys: [hot], computeUnits: 600, probability: 0.9, withinSlots: 8 }, bundle: 'yes' }],
        /^params\[0\]\.bundle must be true or false$/,
      ],
      [
        [{ accountKeys: [hot], computeUnits: 600, probability: 0.9, withinSlots: 8, level: 'High' }],
        /^params\[0\]\.level is not a field of the request/,
      ],
      [[null], /params\[0\] must be an object$/],
    ] as const) {
      const body = (await rpc(gw.url, gw.key, 'getLandingEstimate', params as unknown as unknown[])).body;
      assert.equal(body.error?.code, -32602, JSON.stringify(body));
      assert.match(body.error.message, message);
    }
  });

  it("counts getLandingEstimate and getPriorityFeeEstimate against the key's reads per second", async () => {
    const store = await openStore(resolveConfig({ dataDir: gw.dataDir }, {}), KEY_STORE);
    const slow = await store.create({ name: 'slow advice reads', bundle: false, readsPerSecond: 1 }).finally(() => store.close());
    await waitForKey(gw.url, slow.key);
    for (const [method, params] of [
      ['getLandingEstimate', [{ ...transfer, probability: 0.9, withinSlots: 8 }]],
      ['getPriorityFeeEstimate', [{ accountKeys: [bs58.encode(HOT_ACCOUNT)] }]],
    ] as const) {
      await sleep(1_100);
      const bodies = [];
      for (let i = 0; i < 3; i++) bodies.push((await rpc(gw.url, slow.key, method, [...params])).body);
      assert.equal(bodies[0].error, undefined, `${method}: ${JSON.stringify(bodies[0])}`);
      const refused = bodies.find((body) => body.error !== undefined);
      assert.equal(refused?.error.code, -32097, `${method}: ${JSON.stringify(bodies)}`);
      assert.match(refused.error.message, /may send 1 reads per second; nothing was read/);
    }
  });
});
