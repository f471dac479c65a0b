/**
 * `npm run bench` rewrites latest.json but keeps what bench:landing, bench:strategy and
 * bench:scaling wrote there (each with the commit it measured), until those benchmarks run again.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { landingFiguresOf, scalingFiguresOf } from '../../bench/report';

describe('bench report', () => {
  it("carries bench:landing's and bench:strategy's figures, and the landing headline names, into the next latest.json", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-report-'));
    try {
      const file = path.join(dir, 'latest.json');
      assert.deepEqual(landingFiguresOf(file), { landing: {}, flat: {} }, 'no file: nothing to keep');
      fs.writeFileSync(
        file,
        JSON.stringify({
          landing: { routes: ['old'], market: { commit: 'a' }, strategy: { commit: 'b' } },
          landing_2x_advised_within8_pct: 99.5,
          landing_2x_plain_within8_pct: 100,
          landing_2x_advised_overpayment: 1.01,
          landing_advice_calibration_max_error_pts: 0.6,
          ratios: { old: 1 },
        }),
      );
      const kept = landingFiguresOf(file);
      assert.deepEqual(kept.landing, { market: { commit: 'a' }, strategy: { commit: 'b' } }, "not the old by-route figures: bench's own");
      assert.deepEqual(kept.flat, {
        landing_2x_advised_within8_pct: 99.5,
        landing_2x_plain_within8_pct: 100,
        landing_2x_advised_overpayment: 1.01,
        landing_advice_calibration_max_error_pts: 0.6,
      });
      fs.writeFileSync(file, JSON.stringify({ landing: { strategy: { commit: 'b' } } }));
      assert.deepEqual(landingFiguresOf(file), { landing: { strategy: { commit: 'b' } }, flat: {} }, 'strategy alone is kept too');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("carries bench:scaling's figures and its two ratios into the next latest.json", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-report-'));
    try {
      const file = path.join(dir, 'latest.json');
      assert.deepEqual(scalingFiguresOf(file), {}, 'no file: nothing to keep');
      fs.writeFileSync(file, JSON.stringify({ ratios: { old: 1 } }));
      assert.deepEqual(scalingFiguresOf(file), {}, 'never run: nothing to keep');
      fs.writeFileSync(
        file,
        JSON.stringify({
          scaling: { commit: 'c' },
          cluster_cpu_per_request_vs_embedded: 2.5,
          cluster_rps_vs_embedded: 0.4,
          ratios: { old: 1 },
        }),
      );
      assert.deepEqual(scalingFiguresOf(file), {
        scaling: { commit: 'c' },
        cluster_cpu_per_request_vs_embedded: 2.5,
        cluster_rps_vs_embedded: 0.4,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
