/**
 * The PostgreSQL journal's group commit: a turn's new submissions are stored by one
 * statement (one round trip, no transaction of its own), with their transactions' wires
 * intact and each answered with its own sequence number.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type pg from 'pg';
import { openPostgres } from '../../../src/stores/database/postgres-database';
import { createPostgresReads } from '../../../src/stores/journal/journal-postgres-reads';
import { MIGRATIONS } from '../../../src/stores/journal/journal-postgres-schema';
import { createPostgresWrites, createWritePool } from '../../../src/stores/journal/journal-postgres-writes';
import type { SendEvidence } from '../../../src/stores/journal/journal';
import { journalSubmission } from '../../helpers/journal-files';
import { POSTGRES_URL, testSchema } from '../../helpers/postgres';

const evidence: SendEvidence = {
  at: 1_795_000_000_000,
  attempt: 0,
  route: ['engine'],
  gating: 'policy',
  slot: 100,
  windowSlots: 8,
  leaders: ['A'],
  heldMs: 0,
  heldReason: null,
};

describe('PostgreSQL journal writes', () => {
  const { schema, drop } = testSchema();
  after(drop);

  it("a turn's new submissions are one statement to PostgreSQL, each stored whole under its own number", async () => {
    const pool = await openPostgres(POSTGRES_URL, schema, { component: 'journal', migrations: MIGRATIONS, connections: 2 });
    try {
      const calls = { query: 0, connect: 0 };
      const counted = new Proxy(pool, {
        get(target, property) {
          const value = Reflect.get(target, property, target) as unknown;
          if (property === 'query' || property === 'connect') calls[property]++;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      }) as pg.Pool;
      const writes = createPostgresWrites(counted, 'gw_test');
      const subs = [
        journalSubmission('transaction', 1),
        journalSubmission('batch', 3),
        journalSubmission('bundle', 2, { bundleId: 'bundle-1', antiMev: true }),
        journalSubmission('transaction', 1),
      ];
      const sent = { ...subs[2]!, transactions: subs[2]!.transactions.map((tx) => ({ ...tx, send: evidence })) };
      const seqs = await Promise.all([writes.record(subs[0]!), writes.record(subs[1]!), writes.record(sent), writes.record(subs[3]!)]);
      assert.deepEqual(calls, { query: 1, connect: 0 }, 'one statement on its own, no BEGIN and COMMIT');
      assert.equal(new Set(seqs).size, 4);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
        'numbered in the order recorded',
      );
      const entries = await createPostgresReads(pool).after(0);
      assert.deepEqual(
        entries.map((e) => e.seq),
        seqs,
      );
      entries.forEach((entry, i) => {
        assert.equal(entry.kind, subs[i]!.kind);
        assert.deepEqual(
          entry.transactions.map((tx) => [tx.position, tx.signature, tx.wire.toString('hex'), tx.state]),
          subs[i]!.transactions.map((tx, position) => [position, tx.signature, tx.wire.toString('hex'), 'forwarded']),
        );
      });
      assert.deepEqual(
        entries[2]!.transactions.map((tx) => tx.sends),
        [[evidence], [evidence]],
        'the first sends of the protected bundle',
      );
      assert.deepEqual(
        entries[1]!.transactions.map((tx) => tx.sends),
        [[], [], []],
      );
      await writes.drain();
    } finally {
      await pool.end();
    }
  });

  it("the group commit's connection plans the statement for new submissions once, not for each group", async () => {
    await (await openPostgres(POSTGRES_URL, schema, { component: 'journal', migrations: MIGRATIONS, connections: 1 })).end();
    const pool = createWritePool(POSTGRES_URL, schema);
    try {
      const writes = createPostgresWrites(pool, 'gw_test');
      for (let i = 0; i < 8; i++)
        await Promise.all([writes.record(journalSubmission('transaction', 1)), writes.record(journalSubmission('batch', i + 1))]);
      const client = await pool.connect();
      try {
        const { rows } = await client.query<{ generic_plans: number; custom_plans: number }>(
          "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'journal-insert-submissions'",
        );
        assert.equal(rows.length, 1, 'prepared on this connection');
        assert.equal(Number(rows[0]!.custom_plans), 0, 'never planned for the values given');
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('a transaction row is stored with no foreign-key check, also in tables made by an earlier version, and what they held reads back', async () => {
    const { schema: upgraded, drop: dropUpgraded } = testSchema();
    try {
      const older = await openPostgres(POSTGRES_URL, upgraded, {
        component: 'journal',
        migrations: MIGRATIONS.slice(0, -1),
        connections: 1,
      });
      const writePool = createWritePool(POSTGRES_URL, upgraded);
      const before = await createPostgresWrites(writePool, 'gw_old').record(journalSubmission('transaction', 1));
      await writePool.end();
      const keys = async (pool: pg.Pool) =>
        (
          await pool.query<{ conname: string }>(
            "SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 AND c.contype = 'f'",
            [upgraded],
          )
        ).rows.map((r) => r.conname);
      assert.deepEqual(await keys(older), ['submission_transactions_seq_fkey'], 'the earlier version has the key');
      await older.end();
      const pool = await openPostgres(POSTGRES_URL, upgraded, { component: 'journal', migrations: MIGRATIONS, connections: 1 });
      try {
        assert.deepEqual(await keys(pool), [], 'the upgrade drops it');
        const entries = await createPostgresReads(pool).after(0);
        assert.deepEqual(
          entries.map((e) => [e.seq, e.transactions.length]),
          [[before, 1]],
          'what the earlier tables held reads back',
        );
      } finally {
        await pool.end();
      }
    } finally {
      await dropUpgraded();
    }
  });
});
