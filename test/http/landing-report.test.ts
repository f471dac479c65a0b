/**
 * The landing report against what the test sent: real signed transactions on the embedded
 * ledger (landing transfers, transfers that fail on chain, one with an unknown blockhash, a
 * batch, a bundle) and refusals (forged signatures, a failing preflight, a key over its
 * rate), then `getLandingReport` and `bin/slipway report --json` must count exactly those,
 * and say the same after a restart on the same data dir.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Keypair, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { resolveConfig } from '../../src/config/config';
import { openStore } from '../../src/stores/database/open-store';
import { KEY_STORE } from '../../src/stores/store-adapters';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { runCli } from '../helpers/process';
import { rpc, submitBatch } from '../helpers/rpc';
import { connect, failingTransferTx, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';

/** What a report answers, as far as these tests read it. */
interface Report {
  keyId: string | null;
  transactions: Record<'submitted' | 'landed' | 'failedOnChain' | 'expired' | 'rejected' | 'pending', number>;
  final: number;
  landedPercent: number | null;
  timeToLand: {
    ms: { samples: number; p50: number | null; p99: number | null };
    slots: { samples: number; p50: number | null; p99: number | null };
  };
  refused: { transactions: number; byReason: Record<string, number> };
  bundles: { submitted: number; landed: number; notLanded: number; pending: number };
  byOperation: Record<string, Omit<Report, 'byOperation' | 'byRoute' | 'bundles' | 'keyId'>>;
  byRoute: Record<string, Omit<Report, 'byOperation' | 'byRoute' | 'bundles' | 'refused' | 'keyId'>>;
}

const LANDING = 4;
const FAILING = 2;
const FORGED = 2;

describe('the landing report', () => {
  let gw: TestGateway;
  let chain: Connection;
  let payer: Keypair;
  /** A key with a rate of 1 transaction per second. */
  let limited: string;
  /** What the limited key's sends came to: accepted, and refused as over its rate. */
  const limitedOutcome = { accepted: 0, rateLimited: 0 };
  let first: Report;

  const createKey = async (name: string, changes: { tps?: number; readsPerSecond?: number }) => {
    const store = await openStore(resolveConfig({ dataDir: gw.dataDir }, {}), KEY_STORE);
    try {
      return (await store.create({ name, bundle: false, ...changes })).key;
    } finally {
      await store.close();
    }
  };
  const report = async (key: string, params: unknown[] = []) => (await rpc(gw.url, key, 'getLandingReport', params)).body;
  const send = (tx: string, skipPreflight = false, key = gw.key) =>
    rpc(gw.url, key, 'sendTransaction', [tx, { encoding: 'base64', skipPreflight }]);
  const to = () => Keypair.generate().publicKey;
  /** Rounds of the tracker until nothing of `key`'s is pending, and its refusals are written (once a second). */
  const settled = (key: string, refused: number) =>
    until(
      async () => {
        await gw.app.tracker.runRound();
        return (await report(key)).result as Report;
      },
      (r) => r.transactions.pending === 0 && r.refused.transactions === refused,
      10_000,
    );

  before(async () => {
    gw = await startTestGateway();
    chain = connect(gw.url, gw.key);
    payer = await fundedKeypair(chain, 10);
    limited = await createKey('limited', { tps: 1 });
    await waitForKey(gw.url, limited);

    for (let i = 0; i < LANDING; i++)
      assert.equal(typeof (await send(await transferTx(chain, payer, to(), 1_000_000))).body.result, 'string');
    // Failing on chain: sent past the preflight, which would refuse them.
    for (let i = 0; i < FAILING; i++)
      assert.equal(typeof (await send(await failingTransferTx(chain, payer, to()), true)).body.result, 'string');
    // A blockhash the ledger never made: journaled, then expired.
    const stale = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 7)) }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to(), lamports: 1_000_000 }),
    );
    stale.sign(payer);
    assert.equal(typeof (await send(stale.serialize().toString('base64'), true)).body.result, 'string');
    const batch = await submitBatch(gw.url, gw.key, [
      await transferTx(chain, payer, to(), 2_000_000),
      await transferTx(chain, payer, to(), 3_000_000),
    ]);
    assert.equal(batch.body.code, 1, JSON.stringify(batch.body));
    const bundle = await rpc(gw.url, gw.key, 'sendBundle', [
      [await transferTx(chain, payer, to(), 4_000_000), await transferTx(chain, payer, to(), 5_000_000)],
      { encoding: 'base64' },
    ]);
    assert.match(bundle.body.result, /^[0-9a-f]{64}$/, JSON.stringify(bundle.body));

    // Refused: forged signatures (invalid_request), a failing preflight (simulation_failed).
    for (let i = 0; i < FORGED; i++) {
      const forged = Buffer.from(await transferTx(chain, payer, to(), 1_000_000), 'base64');
      forged[70]! ^= 1;
      assert.equal((await send(forged.toString('base64'))).body.error.code, -32003);
    }
    assert.equal((await send(await failingTransferTx(chain, payer, to()))).body.error.code, -32002);

    // A key over its rate: what it was refused is counted under it, rate_limited.
    const txs = await Promise.all(Array.from({ length: 5 }, (_, i) => transferTx(chain, payer, to(), 1_000_000 + i)));
    for (const answer of await Promise.all(txs.map((tx) => send(tx, false, limited)))) {
      if (answer.body.result !== undefined) limitedOutcome.accepted += 1;
      else if (answer.body.error.code === -32097) limitedOutcome.rateLimited += 1;
      else assert.fail(JSON.stringify(answer.body));
    }
    assert.ok(limitedOutcome.rateLimited > 0, 'the limited key was never over its rate');
    first = await settled(gw.key, FORGED + 1);
  });
  after(async () => {
    await gw?.close();
  });

  it('counts exactly what the key sent, by outcome, operation and route, and its refusals by reason', () => {
    const landed = LANDING + 2 + 2; // transfers, the batch's two, the bundle's two
    const submitted = landed + FAILING + 1;
    assert.deepEqual(first.transactions, { submitted, landed, failedOnChain: FAILING, expired: 1, rejected: 0, pending: 0 });
    assert.equal(first.final, submitted);
    assert.equal(first.landedPercent, Math.round((landed / submitted) * 10_000) / 100);
    assert.deepEqual(first.refused, { transactions: FORGED + 1, byReason: { invalid_request: FORGED, simulation_failed: 1 } });
    assert.deepEqual(first.bundles, { submitted: 1, landed: 1, notLanded: 0, pending: 0 });
    const { sendTransaction, submitBatch: batch, sendBundle } = first.byOperation;
    assert.deepEqual(sendTransaction!.transactions, {
      submitted: LANDING + FAILING + 1,
      landed: LANDING,
      failedOnChain: FAILING,
      expired: 1,
      rejected: 0,
      pending: 0,
    });
    assert.equal(sendTransaction!.landedPercent, Math.round((LANDING / (LANDING + FAILING + 1)) * 10_000) / 100);
    assert.deepEqual(sendTransaction!.refused.byReason, { invalid_request: FORGED, simulation_failed: 1 });
    assert.deepEqual(batch!.transactions, { submitted: 2, landed: 2, failedOnChain: 0, expired: 0, rejected: 0, pending: 0 });
    assert.equal(batch!.landedPercent, 100);
    assert.deepEqual(sendBundle!.transactions, { submitted: 2, landed: 2, failedOnChain: 0, expired: 0, rejected: 0, pending: 0 });
    assert.deepEqual(Object.keys(first.byRoute), ['embedded']);
    assert.deepEqual(first.byRoute.embedded!.transactions, first.transactions);
  });

  it('times every landing (landed or failed on chain) in ms and slots, p50 at most p99', () => {
    for (const figures of [first, first.byOperation.sendTransaction!, first.byOperation.sendBundle!, first.byRoute.embedded!]) {
      const landings = figures.transactions.landed + figures.transactions.failedOnChain;
      const { ms, slots } = figures.timeToLand;
      assert.equal(ms.samples, landings);
      assert.equal(slots.samples, landings, 'a receipt slot was unknown');
      for (const p of [ms, slots]) {
        assert.ok(p.p50! >= 0 && p.p50! <= p.p99!, JSON.stringify(p));
        assert.ok(Number.isInteger(p.p50) && Number.isInteger(p.p99));
      }
      // The embedded ledger executes a transaction as it is sent: it lands within a few slots (50 ms each here) and a second or two.
      assert.ok(slots.p99! <= 40, JSON.stringify(slots));
      assert.ok(ms.p99! < 5_000, JSON.stringify(ms));
    }
  });

  it("shows a key only its own submissions: the limited key's report holds its sends and its rate_limited refusals", async () => {
    const own = await settled(limited, limitedOutcome.rateLimited);
    assert.equal(own.transactions.submitted, limitedOutcome.accepted);
    assert.equal(own.transactions.landed, limitedOutcome.accepted);
    assert.deepEqual(own.refused, { transactions: limitedOutcome.rateLimited, byReason: { rate_limited: limitedOutcome.rateLimited } });
    assert.notEqual(own.keyId, first.keyId);
  });

  it('counts a refused batch or bundle as its transactions, under its operation', async () => {
    const key = gw.plainKey;
    const bundle = await rpc(gw.url, key, 'sendBundle', [
      [await transferTx(chain, payer, to(), 1_000_000), await transferTx(chain, payer, to(), 1_000_000)],
      { encoding: 'base64' },
    ]);
    assert.equal(bundle.body.error.code, -32099, 'this key may not send bundles');
    const forged = Buffer.from(await transferTx(chain, payer, to(), 1_000_000), 'base64');
    forged[70]! ^= 1;
    const batch = await submitBatch(gw.url, key, [
      await transferTx(chain, payer, to(), 1_000_000),
      forged.toString('base64'),
      await transferTx(chain, payer, to(), 1_000_000),
    ]);
    assert.notEqual(batch.body.code, 1, JSON.stringify(batch.body));
    const own = await settled(key, 5);
    assert.equal(own.transactions.submitted, 0);
    assert.deepEqual(own.byOperation.sendBundle!.refused, { transactions: 2, byReason: { not_permitted: 2 } });
    assert.deepEqual(own.byOperation.submitBatch!.refused, { transactions: 3, byReason: { invalid_request: 3 } });
    assert.equal(own.landedPercent, null, 'nothing submitted, nothing final');
  });

  it('bin/slipway report --json says the same, per key and for all keys, beside the running server', async () => {
    const cli = await runCli(['report', '--json', '--data-dir', gw.dataDir]);
    assert.equal(cli.code, 0, cli.stderr);
    const { all, keys } = JSON.parse(cli.stdout) as { all: Report; keys: Report[] };
    const mine = keys.find((k) => k.keyId === first.keyId)!;
    assert.deepEqual(strip(mine), strip(first));
    assert.equal(all.keyId, null);
    assert.equal(all.transactions.submitted, first.transactions.submitted + limitedOutcome.accepted);
    // Every key's refusals: the first key's, the limited key's, and the plain key's batch and bundle.
    assert.deepEqual(all.refused.byReason, {
      invalid_request: FORGED + 3,
      simulation_failed: 1,
      rate_limited: limitedOutcome.rateLimited,
      not_permitted: 2,
    });
    const one = await runCli(['report', '--json', '--key', first.keyId!, '--since', '1h', '--data-dir', gw.dataDir]);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(strip(JSON.parse(one.stdout) as Report), strip(first));
    const text = await runCli(['report', '--key', first.keyId!, '--data-dir', gw.dataDir]);
    assert.match(text.stdout, new RegExp(`landed ${first.landedPercent!.toFixed(2)} % of ${first.final} final`));
    const bad = await runCli(['report', '--since', '8d', '--data-dir', gw.dataDir]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /at most 7 days/);
  });

  it('refuses hostile params with -32602 and a message saying what it takes', async () => {
    const cases: [unknown[], RegExp][] = [
      [[{ since: -5 }], /positive/],
      [[{ since: 0 }], /positive/],
      [[{ since: 1e12 }], /at most 7 days/],
      [[{ since: 604_801 }], /at most 7 days/],
      [[{ since: '8d' }], /at most 7 days/],
      [[{ since: 1.5 }], /whole number/],
      [[{ since: 'abc' }], /duration/],
      [[{ since: '24 h' }], /duration/],
      [[{ since: '99999999d' }], /duration/],
      [[{ since: null }], /whole number/],
      [[{ since: true }], /whole number/],
      [[{ since: ['24h'] }], /whole number/],
      [['24h'], /must be an object/],
      [[[{ since: 60 }]], /must be an object/],
      [[{ since: 60, keyId: 'someone else' }], /unknown field "keyId"/],
      [[{}, {}], /got 2 params/],
    ];
    for (const [params, message] of cases) {
      const body = await report(gw.key, params);
      assert.equal(body.error?.code, -32602, `${JSON.stringify(params)}: ${JSON.stringify(body)}`);
      assert.match(body.error.message, message, JSON.stringify(params));
    }
    const object = await rpc(gw.url, gw.key, 'getLandingReport', { since: 60 } as never);
    assert.equal(object.body.error.code, -32602);
    for (const since of [60, '15m', '7d', 604_800]) assert.equal((await report(gw.key, [{ since }])).result.keyId, first.keyId);
    assert.deepEqual(strip((await report(gw.key, [null])).result as Report), strip(first));
  });

  it("is counted against the key's reads rate", async () => {
    const slow = await createKey('slow reads', { readsPerSecond: 1 });
    await waitForKey(gw.url, slow);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await report(slow)).error?.code ?? 'ok');
    assert.equal(codes[0], 'ok');
    assert.ok(codes.includes(-32097), JSON.stringify(codes));
  });

  it('says the same after a restart on the same data dir', async () => {
    const { dataDir, key } = gw;
    await gw.app.close();
    gw = await startTestGateway({ dataDir });
    const again = (await report(key)).result as Report;
    assert.deepEqual(strip(again), strip(first));
    assert.ok(fs.existsSync(`${dataDir}/refusals.sqlite`));
  });
});

/** A report without its period, which moves with the clock. */
function strip(report: Report): Omit<Report, 'since' | 'until'> {
  const { since: _since, until: _until, ...rest } = report as Report & { since: string; until: string };
  return rest;
}
