/**
 * The committed benchmark figures are figures of this code: bench/results/latest.json names
 * the commit it measured, which must be an ancestor of HEAD (or HEAD), measured clean, in the
 * default mode over at least three runs, with the headline ratios under their stable names;
 * docs/PERFORMANCE.md's headline names the same commit.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '../../..');
const latest = JSON.parse(fs.readFileSync(path.join(ROOT, 'bench/results/latest.json'), 'utf8')) as {
  commit?: string;
  uncommittedChanges?: boolean;
  mode: string;
  runs?: number;
  ratios: Record<string, number>;
  spread?: Record<string, { min: number; max: number }>;
  machineState?: Record<string, number>;
};

const HEADLINE = [
  'sendTransaction_cpu_excl_verify_vs_ceiling',
  'verify_cpu_vs_libsodium',
  'submitBatch_cpu_per_tx_vs_sendTransaction',
  'sendBundle_cpu_per_tx_vs_sendTransaction',
  'p99_vs_ceiling_at_quarter_capacity',
];

describe('bench/results/latest.json', () => {
  it('names a commit that is HEAD or an ancestor of it, measured with no uncommitted changes', () => {
    assert.match(latest.commit ?? '', /^[0-9a-f]{40}$/, 'latest.json has the full hash of the commit it measured');
    const isAncestor = spawnSync('git', ['merge-base', '--is-ancestor', latest.commit!, 'HEAD'], { cwd: ROOT });
    assert.equal(
      isAncestor.status,
      0,
      `${latest.commit} is not an ancestor of HEAD (${execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()}): run npm run bench again`,
    );
    assert.equal(latest.uncommittedChanges, false);
  });

  it('is the default mode, the median of at least three runs, with the headline ratios, their spread and the machine state', () => {
    assert.equal(latest.mode, 'default');
    assert.ok((latest.runs ?? 0) >= 3, `runs: ${latest.runs}`);
    for (const name of HEADLINE) {
      assert.equal(typeof latest.ratios[name], 'number', name);
      assert.ok(Number.isFinite(latest.ratios[name]), name);
      const spread = latest.spread?.[name];
      assert.ok(spread !== undefined && spread.min <= latest.ratios[name]! && latest.ratios[name]! <= spread.max, name);
    }
    for (const name of ['ceilingRps', 'ceilingCpuUsPerRequest', 'libsodiumVerifyUs', 'stealPct'])
      assert.equal(typeof latest.machineState?.[name], 'number', name);
  });

  it("is what docs/PERFORMANCE.md's headline reports", () => {
    const performance = fs.readFileSync(path.join(ROOT, 'docs/PERFORMANCE.md'), 'utf8');
    assert.ok(performance.includes(latest.commit!.slice(0, 12)), `docs/PERFORMANCE.md names ${latest.commit!.slice(0, 12)}`);
  });
});
