/**
 * getPriorityFeeEstimate through the gateway, on an embedded ledger congested by the market:
 * the levels come from the recent blocks' prices (global and per account), in Helius's
 * shape, and bad params get -32602 naming the parameter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import bs58 from 'bs58';
import { HOT_ACCOUNT } from '../../src/market/market';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc } from '../helpers/rpc';

describe('getPriorityFeeEstimate', () => {
  let gw: TestGateway;
  before(async () => {
    // Ten market transfers a block, sent at twice that: congested from the first slots.
    gw = await startTestGateway({ market: 2, blockUnits: 20_000, slotMs: 100 });
    await sleep(1_500);
  });
  after(() => gw.close());

  const estimate = async (request: unknown) => {
    const answer = await rpc(gw.url, gw.key, 'getPriorityFeeEstimate', [request]);
    assert.equal(answer.status, 200);
    return answer.body;
  };

  it('answers the six levels from the recent blocks, in order, and Medium by default', async () => {
    const { result } = await estimate({ options: { includeAllPriorityFeeLevels: true } });
    const { min, low, medium, high, veryHigh, unsafeMax } = result.priorityFeeLevels;
    assert.ok(min <= low && low <= medium && medium <= high && high <= veryHigh && veryHigh <= unsafeMax, JSON.stringify(result));
    assert.ok(medium > 0 && unsafeMax > medium, 'the market pays: the levels are not all zero');
    const plain = (await estimate({ options: {} })).result;
    assert.equal(typeof plain.priorityFeeEstimate, 'number');
    const recommended = (await estimate({ options: { recommended: true } })).result.priorityFeeEstimate;
    assert.ok(recommended >= 10_000, 'the recommended fee is at least 10,000 micro-lamports per unit');
  });

  it("answers no lower for an account than the global level, and the hot account's own when it pays more", async () => {
    const global = (await estimate({ options: { priorityLevel: 'High' } })).result.priorityFeeEstimate;
    const hot = (await estimate({ accountKeys: [bs58.encode(HOT_ACCOUNT)], options: { priorityLevel: 'High' } })).result
      .priorityFeeEstimate;
    assert.ok(hot >= global, `${hot} for the hot account, ${global} globally`);
  });

  it('refuses bad params with -32602 naming the parameter', async () => {
    for (const [request, message] of [
      [{ options: { priorityLevel: 'Extreme' } }, /^params\[0\]\.options\.priorityLevel must be one of /],
      [{ options: { lookbackSlots: 151 } }, /^params\[0\]\.options\.lookbackSlots must be an integer from 1 to 150; got 151$/],
      [{ transaction: 'not a transaction' }, /^params\[0\]\.transaction is not valid base58$/],
      [
        { accountKeys: Array.from({ length: 129 }, () => bs58.encode(HOT_ACCOUNT)) },
        /^params\[0\]\.accountKeys has 129 accounts; at most 128$/,
      ],
    ] as const) {
      const body = await estimate(request);
      assert.equal(body.error?.code, -32602, JSON.stringify(body));
      assert.match(body.error.message, message);
    }
  });
});
