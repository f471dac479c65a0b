import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setHeapGrowth } from '../../src/runtime/heap-growth';

const MODULE = path.join(__dirname, '../../src/runtime/heap-growth.js');

/** V8's own account of the growing factor behind the old generation's next limit, after a full collection in a fresh process. */
function factorsAfter(call: string): string[] {
  const script = `${call}; const live = Array.from({ length: 100000 }, (_, i) => ({ i })); globalThis.gc(); console.log(live.length);`;
  const child = spawnSync(process.execPath, ['--expose-gc', '--trace-gc-verbose', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(child.status, 0, child.stderr);
  // Node 20 and 22 print the factor with the limit, `... new limit: 20782 KB (2.5)`; later ones on a line of its own, `factor 2.5 based on ...`.
  return [...child.stdout.matchAll(/\[HeapController\] (?:factor ([\d.]+) based|Limit: .*\(([\d.]+)\))/g)].map((m) => m[1] ?? m[2]!);
}

describe('heap growth', () => {
  it('is the factor V8 grows the old generation by after a full collection', () => {
    // 270 % is 3.7 times, a factor V8's own choice (1.1 to 4, from its speeds) does not land on here.
    assert.ok(factorsAfter(`require(${JSON.stringify(MODULE)}).setHeapGrowth(270)`).includes('3.7'));
    assert.ok(!factorsAfter('void 0').includes('3.7'), "V8's own factor happened to be 3.7: this test needs another value");
  });

  it('refuses what is not a whole number of percent', () => {
    assert.throws(() => setHeapGrowth(-1), /whole number of percent, not -1/);
    assert.throws(() => setHeapGrowth(2.5), /whole number of percent, not 2.5/);
  });
});
