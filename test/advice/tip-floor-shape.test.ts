/**
 * An engine's tip floor answer is passed on only in Jito's shape, rebuilt with Jito's seven
 * fields; anything else is refused with a reason, never thrown or passed through.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTipFloorAnswer } from '../../src/advice/tip-floor-shape';

const JITO = {
  time: '2025-04-24T13:47:32+00:00',
  landed_tips_25th_percentile: 0.000005,
  landed_tips_50th_percentile: 0.00001,
  landed_tips_75th_percentile: 0.001,
  landed_tips_95th_percentile: 0.00533476325,
  landed_tips_99th_percentile: 0.00826274555000001,
  ema_landed_tips_50th_percentile: 0.000009952174575705424,
};

describe("an engine's tip floor answer", () => {
  it("is taken in Jito's shape, its entry rebuilt with exactly Jito's fields in Jito's order", () => {
    const entry = parseTipFloorAnswer(JSON.stringify([{ extra: 'dropped', ...JITO, __proto__: { polluted: true } }]));
    assert.deepEqual(entry, JITO);
    assert.deepEqual(Object.keys(entry), Object.keys(JITO));
  });

  it('is refused, saying why, when it is not JSON, not an array, or holds no entry', () => {
    const cases: [string, string][] = [
      ['<html>502 Bad Gateway</html>', 'the answer is not JSON'],
      ['', 'the answer is not JSON'],
      [JSON.stringify(JITO), 'the answer is not a JSON array'],
      ['null', 'the answer is not a JSON array'],
      ['[]', 'the array holds no entry object'],
      ['[[]]', 'the array holds no entry object'],
      ['[null]', 'the array holds no entry object'],
      ['["x"]', 'the array holds no entry object'],
    ];
    for (const [text, invalid] of cases) assert.deepEqual(parseTipFloorAnswer(text), { invalid }, text);
  });

  it('is refused when a field is missing or not what it says: a time that is no time, a figure that is no amount of SOL', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ time: undefined }, 'the entry has no time in ISO 8601'],
      [{ time: 1714000000 }, 'the entry has no time in ISO 8601'],
      [{ time: 'yesterday' }, 'the entry has no time in ISO 8601'],
      [{ time: `2025-04-24T13:47:32Z${' '.repeat(100)}` }, 'the entry has no time in ISO 8601'],
      [{ landed_tips_50th_percentile: undefined }, "the entry's landed_tips_50th_percentile is not an amount of SOL"],
      [{ landed_tips_25th_percentile: '0.000005' }, "the entry's landed_tips_25th_percentile is not an amount of SOL"],
      [{ landed_tips_75th_percentile: -1 }, "the entry's landed_tips_75th_percentile is not an amount of SOL"],
      [{ landed_tips_95th_percentile: null }, "the entry's landed_tips_95th_percentile is not an amount of SOL"],
      [{ landed_tips_99th_percentile: 1e300 }, "the entry's landed_tips_99th_percentile is not an amount of SOL"],
      [{ ema_landed_tips_50th_percentile: {} }, "the entry's ema_landed_tips_50th_percentile is not an amount of SOL"],
    ];
    for (const [change, invalid] of cases)
      assert.deepEqual(parseTipFloorAnswer(JSON.stringify([{ ...JITO, ...change }])), { invalid }, JSON.stringify(change));
    // JSON.parse reads 1e999 as Infinity.
    const infinite = JSON.stringify([JITO]).replace('0.001', '1e999');
    assert.deepEqual(parseTipFloorAnswer(infinite), { invalid: "the entry's landed_tips_75th_percentile is not an amount of SOL" });
  });
});
