/**
 * The PostgreSQL journal's rebroadcast leases: one lease per gateway, renewed without
 * touching a submission's row; a gateway that stops renewing has its unfinished
 * submissions taken over by another, which the first then hears of as lost.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresJournal, LEASE_MS } from '../../../src/stores/journal/journal-postgres';
import { journalSubmission } from '../../helpers/journal-files';
import { POSTGRES_URL, testSchema } from '../../helpers/postgres';

describe('PostgreSQL journal leases', () => {
  const { schema, drop } = testSchema();
  after(drop);

  const rowsOf = async (seqs: number[]) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      return (
        await client.query<{ seq: string; owner: string; lease_until: string; xmin: string }>(
          `SELECT seq, owner, lease_until, xmin::text FROM ${schema}.submissions WHERE seq = ANY($1::bigint[]) ORDER BY seq`,
          [seqs],
        )
      ).rows;
    } finally {
      await client.end();
    }
  };

  it('renewing a lease rewrites no submission row', async () => {
    const journal = await createPostgresJournal(POSTGRES_URL, schema, 'gw_renewing');
    try {
      const seqs = await Promise.all([journal.record(journalSubmission('transaction', 1)), journal.record(journalSubmission('batch', 2))]);
      const before = await rowsOf(seqs);
      assert.deepEqual(await journal.leases!.renew(seqs), [], 'nothing lost');
      assert.deepEqual(await rowsOf(seqs), before, 'the rows are the versions written');
    } finally {
      await journal.close();
    }
  });

  it('a gateway that stops renewing has its unfinished submissions taken over, and hears they are lost when it renews again', async () => {
    const a = await createPostgresJournal(POSTGRES_URL, schema, 'gw_stopping');
    const b = await createPostgresJournal(POSTGRES_URL, schema, 'gw_taking');
    try {
      // B's first round looks at every row: A's lease runs, nothing is B's.
      await b.leases!.takeOver(100);
      const seq = await a.record(journalSubmission('transaction', 1));
      assert.deepEqual(await b.leases!.takeOver(100), [], 'not while A holds its lease');
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 300));
      const taken = await b.leases!.takeOver(100);
      assert.ok(
        taken.some((entry) => entry.seq === seq),
        `B took A's submission over: ${JSON.stringify(taken.map((e) => e.seq))}`,
      );
      assert.equal((await rowsOf([seq]))[0]!.owner, 'gw_taking');
      assert.deepEqual(await a.leases!.renew([seq]), [seq], 'A hears it lost the submission');
      assert.deepEqual(await b.leases!.takeOver(100), [], 'A holds its lease again, and B holds the submission');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
