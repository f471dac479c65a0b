/**
 * The idempotency store's two adapters against one contract (real SQLite files and a real
 * PostgreSQL schema), and the claim protocol over them (http/idempotency.ts): copies on two
 * gateways sharing a store submit once, a claim left by a killed gateway is taken over, a
 * record past its time is replaced, and a store that cannot be reached sends nothing.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fail, ok, slipwayError, type Result } from '../../src/errors/error-catalogue';
import { createIdempotency, type IdempotentSubmission } from '../../src/http/idempotency';
import type { Submitted } from '../../src/pipeline/submission-shapes';
import type { IdempotencyStore } from '../../src/stores/idempotency-store';
import { createPostgresIdempotencyStore } from '../../src/stores/idempotency-store-postgres';
import { createSqliteIdempotencyStore } from '../../src/stores/idempotency-store-sqlite';
import type { ValidatedTransaction } from '../../src/validation/validate-transaction';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';

const record = (fingerprint: string) => ({ fingerprint, operation: 'sendTransaction', signatures: ['sigA'], bundleId: null });

/** A transaction as the protocol reads it: its signature and digest (what the fingerprint is made of). */
const tx = (n: number) =>
  ({
    signature: `sig${n}`,
    digest: crypto.createHash('sha256').update(String(n)).digest().subarray(0, 16),
  }) as unknown as ValidatedTransaction;
const submission = (key: string, n: number): IdempotentSubmission => ({
  keyId: 'key_1',
  idempotencyKey: key,
  operation: 'sendTransaction',
  antiMev: false,
  transactions: [tx(n)],
  bundleId: null,
});

const stores: Record<string, () => Promise<{ open: () => Promise<IdempotencyStore>; cleanup: () => Promise<void> }>> = {
  sqlite: async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-idem-'));
    return {
      open: async () => createSqliteIdempotencyStore(path.join(dir, 'idempotency.sqlite')),
      cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  },
  postgres: async () => {
    const { schema, drop } = testSchema();
    return { open: () => createPostgresIdempotencyStore(POSTGRES_URL, schema), cleanup: drop };
  },
};

for (const [name, make] of Object.entries(stores)) {
  describe(`idempotency keys in ${name}`, () => {
    const setup = make();
    const opened: IdempotencyStore[] = [];
    const open = async () => {
      const store = await (await setup).open();
      opened.push(store);
      return store;
    };
    after(async () => {
      for (const store of opened) await store.close();
      await (await setup).cleanup();
    });

    it('claims once; the holder answers; a second connection sees the record; a live record is not replaced', async () => {
      const a = await open();
      const b = await open();
      assert.deepEqual(await a.claim('key_1', 'k1', record('f1'), 1_000, 0), { claimed: true });
      const seen = await b.claim('key_1', 'k1', record('f2'), 2_000, 0);
      assert.equal(seen.claimed, false);
      assert.deepEqual(!seen.claimed && seen.existing, { ...record('f1'), answer: null, createdAt: 1_000, claimedAt: 1_000 });
      await a.answer('key_1', 'k1', '"sigA"');
      assert.equal((await b.get('key_1', 'k1'))?.answer, '"sigA"');
      assert.deepEqual(await b.claim('key_2', 'k1', record('f2'), 2_000, 0), { claimed: true }, 'another API key has its own');
    });

    it('replaces a record past its time; releases only an unanswered claim; takes over a claim once; purges', async () => {
      const a = await open();
      await a.claim('key_1', 'k2', record('f1'), 1_000, 0);
      await a.answer('key_1', 'k2', '"old"');
      assert.deepEqual(await a.claim('key_1', 'k2', record('f2'), 5_000, 1_001), { claimed: true }, 'made before 1,001: expired');
      assert.equal((await a.get('key_1', 'k2'))?.fingerprint, 'f2');
      assert.equal((await a.get('key_1', 'k2'))?.answer, null);
      assert.equal(await a.takeOver('key_1', 'k2', 4_999, 6_000), false, 'not the claim seen');
      assert.equal(await a.takeOver('key_1', 'k2', 5_000, 6_000), true);
      assert.equal(await a.takeOver('key_1', 'k2', 5_000, 6_000), false, 'taken already');
      await a.release('key_1', 'k2');
      assert.equal(await a.get('key_1', 'k2'), null);
      await a.claim('key_1', 'k3', record('f1'), 1_000, 0);
      await a.answer('key_1', 'k3', '"kept"');
      await a.release('key_1', 'k3');
      assert.equal((await a.get('key_1', 'k3'))?.answer, '"kept"', 'an answered record is not released');
      assert.ok((await a.purge(2_000)) >= 1);
      assert.equal(await a.get('key_1', 'k3'), null);
    });

    it('two gateways sharing the store, copies at once on each: one submission, the same answer to all', async () => {
      const gateways = [await open(), await open()].map((store) =>
        createIdempotency({ store, ttlMs: 60_000, abandonedAfterMs: 10_000, pollMs: 5, logError: (error) => assert.fail(String(error)) }),
      );
      let submitted = 0;
      const submit = async (): Promise<Result<Submitted<string>>> => {
        submitted++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return ok({ value: 'sig1', outcome: 'accepted' });
      };
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => gateways[i % 2]!.run(submission('k4', 1), submit)));
      assert.equal(submitted, 1);
      assert.deepEqual(new Set(answers.map((a) => a.ok && a.value.value)), new Set(['sig1']));
      assert.equal(answers.filter((a) => a.ok && a.value.outcome === 'replayed').length, 9);
      const other = await gateways[1]!.run(submission('k4', 2), submit);
      assert.equal(!other.ok && other.error.kind, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(submitted, 1);
    });

    it('a claim left unanswered (its gateway killed) is taken over after abandonedAfterMs; a refusal frees the key', async () => {
      const store = await open();
      const gateway = createIdempotency({ store, ttlMs: 60_000, abandonedAfterMs: 300, pollMs: 10, logError: () => {} });
      // What a gateway killed between its claim and its answer leaves behind, for this same submission.
      let submitted = 0;
      const dead = createIdempotency({ store, ttlMs: 60_000, abandonedAfterMs: 300, pollMs: 10, logError: () => {} });
      const hung = dead.run(submission('k5', 1), () => new Promise<never>(() => {}));
      void hung;
      // Wait for the dead gateway's claim to be in the store (a fixed pause lost the race on a loaded machine).
      while ((await store.get('key_1', 'k5')) === null) await new Promise((resolve) => setTimeout(resolve, 5));
      const started = Date.now();
      const answer = await gateway.run(submission('k5', 1), async () => (submitted++, ok({ value: 'sig1', outcome: 'duplicate' })));
      assert.equal(answer.ok && answer.value.value, 'sig1');
      assert.equal(submitted, 1);
      assert.ok(Date.now() - started >= 250, 'it waited for the claim to be abandoned');
      assert.equal((await store.get('key_1', 'k5'))?.answer, '"sig1"');

      const refused = await gateway.run(submission('k6', 1), async () => fail(slipwayError('PREFLIGHT_FAILURE', 'no')));
      assert.equal(!refused.ok && refused.error.kind, 'PREFLIGHT_FAILURE');
      assert.equal(await store.get('key_1', 'k6'), null, 'released');
      const retried = await gateway.run(submission('k6', 2), async () => ok({ value: 'sig2', outcome: 'accepted' }));
      assert.equal(retried.ok && retried.value.value, 'sig2');
    });
  });
}

describe('idempotency keys when the submission itself fails', () => {
  it("its error is its own (not the store's), and the key is freed for a retry", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-idem-'));
    const store = createSqliteIdempotencyStore(path.join(dir, 'idempotency.sqlite'));
    try {
      const gateway = createIdempotency({ store, ttlMs: 60_000, abandonedAfterMs: 1_000, pollMs: 10, logError: () => {} });
      await assert.rejects(
        gateway.run(submission('k8', 1), async () => Promise.reject(new Error('a bug in the pipeline'))),
        /a bug in the pipeline/,
      );
      assert.equal(await store.get('key_1', 'k8'), null);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('idempotency keys when the store cannot be reached', () => {
  it('refuses with -32094 (STORE_UNAVAILABLE) and sends nothing', async () => {
    const down = async () => Promise.reject(new Error('connection refused'));
    const broken = { claim: down, purge: down, get: down, answer: down, release: down, takeOver: down } as unknown as IdempotencyStore;
    const gateway = createIdempotency({ store: broken, ttlMs: 60_000, abandonedAfterMs: 1_000, pollMs: 10, logError: () => {} });
    let submitted = 0;
    const answer = await gateway.run(submission('k7', 1), async () => (submitted++, ok({ value: 'x', outcome: 'accepted' })));
    assert.equal(!answer.ok && answer.error.kind, 'STORE_UNAVAILABLE');
    assert.match(
      !answer.ok ? answer.error.message : '',
      /^The idempotency keys cannot be reached \(connection refused\): nothing was sent; retry with the same key$/,
    );
    assert.equal(submitted, 0);
  });
});
