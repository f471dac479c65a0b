/** `npm run bench:landing`'s flags: what each gives, and a clear refusal naming the flag for anything else. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOADS, parseLandingOptions } from '../../bench/landing-market-options';

describe("bench:landing's flags", () => {
  it('runs the four loads for 75 s by default, load 2 for 20 s with --quick, and what --loads and --seconds say', () => {
    assert.deepEqual(parseLandingOptions([]), { quick: false, loads: LOADS, sendSeconds: 75, warmSeconds: 20, maxWaitSeconds: 60 });
    assert.deepEqual(LOADS, [0.5, 1, 2, 4]);
    assert.deepEqual(parseLandingOptions(['--quick']), { quick: true, loads: [2], sendSeconds: 20, warmSeconds: 10, maxWaitSeconds: 30 });
    const chosen = parseLandingOptions(['--loads', '0.5,4', '--seconds', '30']);
    assert.ok(typeof chosen !== 'string');
    assert.deepEqual([chosen.loads, chosen.sendSeconds], [[0.5, 4], 30]);
  });

  it('refuses a bad load, a bad duration, a flag without its value and an unknown argument, naming what is wrong', () => {
    const refusals: [string[], RegExp][] = [
      [['--loads', 'abc'], /^--loads: numbers above 0 and at most 16/],
      [['--loads', '0'], /^--loads: numbers above 0/],
      [['--loads', '17'], /^--loads: .*at most 16/],
      [['--loads', '2,'], /^--loads: /],
      [['--loads', '-1'], /^--loads: /],
      [['--loads', '2,2'], /^--loads: each load once/],
      [['--loads'], /^--loads needs a value$/],
      [['--loads', '--quick'], /^--loads needs a value$/],
      [['--seconds', '4'], /^--seconds: a whole number from 5 to 600 \(got "4"\)$/],
      [['--seconds', '601'], /^--seconds: /],
      [['--seconds', '7.5'], /^--seconds: /],
      [['--seconds', 'NaN'], /^--seconds: /],
      [['--seconds'], /^--seconds needs a value$/],
      [['--load', '2'], /^unknown argument "--load"/],
      [['2'], /^unknown argument "2"/],
    ];
    for (const [argv, expected] of refusals) {
      const answer = parseLandingOptions(argv);
      assert.equal(typeof answer, 'string', `${argv.join(' ')} is refused`);
      assert.match(answer as string, expected, argv.join(' '));
    }
  });
});
