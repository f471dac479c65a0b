/**
 * The landing report's arithmetic (landing-statistics.ts), the refusal tally's batching
 * (refusal-count-buffer.ts) and the refusal counts in both stores, on figures worked out by hand.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { slipwayError } from '../../src/errors/error-catalogue';
import type { LandingGroup } from '../../src/stores/journal';
import { landingStatistics, percentiles } from '../../src/reports/landing-statistics';
import { parsePeriod } from '../../src/reports/landing-reports';
import type { RefusalCount, RefusalCounts } from '../../src/stores/refusal-counts';
import { createPostgresRefusalCounts } from '../../src/stores/refusal-counts-postgres';
import { createSqliteRefusalCounts } from '../../src/stores/refusal-counts-sqlite';
import { RefusalCountBuffer } from '../../src/reports/refusal-count-buffer';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';

/** A group of `transactions` transactions of `submissions` submissions (one by default). */
const group = (
  kind: LandingGroup['kind'],
  state: LandingGroup['state'],
  ms: number | null = null,
  route = 'embedded',
  transactions = 1,
  submissions = transactions,
): LandingGroup => ({
  kind,
  keyId: 'k',
  route,
  state,
  msToLand: ms,
  slotsToLand: ms === null ? null : Math.floor(ms / 400),
  transactions,
  submissions,
});
const samples = (...values: number[]) => values.map((value) => ({ value, count: 1 }));

describe('landing figures', () => {
  it('percentiles by nearest rank', () => {
    assert.deepEqual(percentiles(samples(...Array.from({ length: 100 }, (_, i) => 100 - i))), { samples: 100, p50: 50, p99: 99 });
    assert.deepEqual(percentiles(samples(7)), { samples: 1, p50: 7, p99: 7 });
    assert.deepEqual(percentiles(samples(3, 1)), { samples: 2, p50: 1, p99: 3 });
    assert.deepEqual(percentiles([]), { samples: 0, p50: null, p99: null });
    // Counted samples: 98 of 10 ms, one of 20, one of 500: the 99th percentile is the 99th sample, 20.
    assert.deepEqual(
      percentiles([
        { value: 500, count: 1 },
        { value: 10, count: 98 },
        { value: 20, count: 1 },
      ]),
      { samples: 100, p50: 10, p99: 20 },
    );
    assert.deepEqual(percentiles([{ value: 5, count: 0 }]), { samples: 0, p50: null, p99: null });
  });

  it('counts transactions by outcome, landed % of the final ones, bundles once each, by operation and route', () => {
    const rows = [
      group('transaction', 'landed', 400),
      group('transaction', 'failed', 800),
      group('transaction', 'expired'),
      group('transaction', 'forwarded'),
      group('batch', 'landed', 1200, 'rpc-a+rpc-b'),
      group('batch', 'rejected', null, 'rpc-a+rpc-b'),
      // Two bundles of two: one landed, one rejected.
      group('bundle', 'landed', 2000, 'jito', 2, 1),
      group('bundle', 'rejected', null, 'jito', 2, 1),
      group('transaction', 'held'),
    ];
    const refusals: Omit<RefusalCount, 'minute'>[] = [
      { keyId: 'k', operation: 'sendTransaction', reasonCode: 'rate_limited', count: 5 },
      { keyId: 'k', operation: 'sendBundle', reasonCode: 'rate_limited', count: 2 },
      { keyId: 'k', operation: 'sendTransaction', reasonCode: 'invalid_request', count: 1 },
    ];
    const f = landingStatistics(rows, refusals);
    assert.deepEqual(f.transactions, { submitted: 11, landed: 4, failedOnChain: 1, expired: 1, rejected: 3, pending: 2 });
    assert.equal(f.final, 9);
    assert.equal(f.landedPercent, 44.44);
    assert.deepEqual(f.timeToLand.ms, { samples: 5, p50: 1200, p99: 2000 });
    assert.deepEqual(f.timeToLand.slots, { samples: 5, p50: 3, p99: 5 });
    assert.deepEqual(f.refused, { transactions: 8, byReason: { rate_limited: 7, invalid_request: 1 } });
    assert.deepEqual(f.bundles, { submitted: 2, landed: 1, notLanded: 1, pending: 0 });
    assert.deepEqual(f.byOperation.sendBundle.refused, { transactions: 2, byReason: { rate_limited: 2 } });
    assert.equal(f.byOperation.sendBundle.landedPercent, 50);
    assert.equal(f.byOperation.submitBatch.landedPercent, 50);
    assert.equal(f.byOperation.sendTransaction.transactions.pending, 2);
    assert.deepEqual(Object.keys(f.byRoute), ['embedded', 'jito', 'rpc-a+rpc-b']);
    assert.equal(f.byRoute.embedded!.landedPercent, 33.33);
    assert.equal(landingStatistics([], []).landedPercent, null);
  });

  it('periods: durations and seconds, positive, at most 7 days', () => {
    assert.equal(parsePeriod('15m'), 900_000);
    assert.equal(parsePeriod('24h'), 86_400_000);
    assert.equal(parsePeriod('7d'), 604_800_000);
    assert.equal(parsePeriod(90), 90_000);
    for (const bad of ['8d', 604_801, 0, -1, '0s', 1.5, NaN, Infinity, '1w', ' 1h', '1H', '', null, {}, '1e3s']) {
      assert.equal(typeof parsePeriod(bad), 'string', JSON.stringify(bad));
    }
  });
});

describe('the refusal tally', () => {
  const memoryStore = () => {
    const writes: RefusalCount[][] = [];
    let failing = false;
    const store: RefusalCounts & { writes: RefusalCount[][]; fail(on: boolean): void } = {
      writes,
      fail: (on) => (failing = on),
      async add(counts) {
        if (failing) throw new Error('down');
        writes.push([...counts]);
      },
      async totals() {
        return [];
      },
      async close() {},
    };
    return store;
  };

  it('a flood of refusals is one write of summed counts; journaled refusals are left out; a batch counts its members', async () => {
    const store = memoryStore();
    const tally = new RefusalCountBuffer(store, () => {});
    const limited = slipwayError('RATE_LIMITED', 'over');
    for (let i = 0; i < 10_000; i++) tally.refused('k1', 'sendTransaction', limited, 'AAAA');
    tally.refused('k1', 'submitBatch', limited, ['a', 'b', 'c']);
    tally.refused('k1', 'submitBatch', slipwayError('INVALID_REQUEST', 'x'), []);
    tally.refused('k2', 'sendTransaction', { ...slipwayError('UPSTREAM_UNAVAILABLE', 'no upstream'), journaled: true }, 'AAAA');
    await tally.flush();
    assert.equal(store.writes.length, 1);
    assert.deepEqual(
      store.writes[0]!.map((c) => [c.keyId, c.operation, c.reasonCode, c.count]),
      [
        ['k1', 'sendTransaction', 'rate_limited', 10_000],
        ['k1', 'submitBatch', 'rate_limited', 3],
        ['k1', 'submitBatch', 'invalid_request', 1],
      ],
    );
    await tally.flush();
    assert.equal(store.writes.length, 1, 'nothing new: no write');
  });

  it('keeps what a failed write held, for the next', async () => {
    const store = memoryStore();
    const errors: unknown[] = [];
    const tally = new RefusalCountBuffer(store, (error) => errors.push(error));
    tally.add('k', 'sendBundle', 'duplicate', 2);
    store.fail(true);
    await tally.flush();
    tally.add('k', 'sendBundle', 'duplicate', 1);
    store.fail(false);
    await tally.close();
    assert.equal(errors.length, 1);
    assert.deepEqual(
      store.writes.flat().map((c) => [c.reasonCode, c.count]),
      [['duplicate', 3]],
    );
  });
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-refusals-'));
const pgSchema = testSchema();
after(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await pgSchema.drop();
});

for (const [name, open] of [
  ['SQLite', async () => createSqliteRefusalCounts(path.join(dir, 'refusals.sqlite'))],
  ['PostgreSQL', () => createPostgresRefusalCounts(POSTGRES_URL, pgSchema.schema)],
] as const) {
  describe(`refusal counts: ${name}`, () => {
    it('adds to the same minute, sums minutes from the one holding `since`, per key or all', async () => {
      const store = await open();
      try {
        const minute = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
        const at = (m: number, count: number, keyId = 'k1'): RefusalCount => ({
          keyId,
          operation: 'sendTransaction',
          reasonCode: 'rate_limited',
          minute: minute + m * 60_000,
          count,
        });
        await store.add([at(0, 2), at(1, 3)]);
        await store.add([at(1, 4), at(2, 1, 'k2')]);
        assert.deepEqual(await store.totals({ sinceMs: minute + 60_000 + 59_999, keyId: 'k1' }), [
          { keyId: 'k1', operation: 'sendTransaction', reasonCode: 'rate_limited', count: 7 },
        ]);
        assert.deepEqual(await store.totals({ sinceMs: minute, keyId: 'k1' }), [
          { keyId: 'k1', operation: 'sendTransaction', reasonCode: 'rate_limited', count: 9 },
        ]);
        const all = await store.totals({ sinceMs: minute });
        assert.deepEqual(all.map((r) => [r.keyId, r.count]).sort(), [
          ['k1', 9],
          ['k2', 1],
        ]);
      } finally {
        await store.close();
      }
    });
  });
}

describe('landing reports asked for again and again', () => {
  it('one read of the journal per key and period for 2 s, shared by concurrent and repeated asks; other keys and periods read their own', async () => {
    const { createLandingReports } = await import('../../src/reports/landing-reports');
    let reads = 0;
    const journal = { landingGroups: async () => (reads++, []) };
    const refusals = { totals: async () => [] };
    const reports = createLandingReports(journal, refusals);
    const first = await Promise.all(Array.from({ length: 50 }, () => reports.ofKey('key_a', 3_600_000)));
    assert.equal(reads, 1);
    assert.ok(first.every((report) => report === first[0]));
    await reports.ofKey('key_a', 3_600_000);
    assert.equal(reads, 1, 'asked again at once: the same report');
    await reports.ofKey('key_b', 3_600_000);
    await reports.ofKey('key_a', 60_000);
    assert.equal(reads, 3);
  });
});
