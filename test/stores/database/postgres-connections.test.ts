/**
 * A PostgreSQL connection that breaks while a gateway holds it (PostgreSQL restarted in the
 * middle of a journal commit) fails that work and nothing else: found when a store restart
 * under load ended a gateway with an uncaught "Connection terminated unexpectedly".
 */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import pg from 'pg';
import { createPool } from '../../../src/stores/database/postgres-database';
import { POSTGRES_URL, testSchema } from '../../helpers/postgres';

const { schema, drop } = testSchema();
after(drop);

it('a checked-out connection whose server process is terminated: its query fails, the process goes on', async () => {
  const pool = createPool({ url: POSTGRES_URL, schema, max: 2 });
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    const client = await pool.connect();
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    // Terminated while checked out and idle, as between two statements of a transaction.
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await assert.rejects(client.query('SELECT 1'), /terminat|not queryable|Connection/i);
    client.release(true);
    // The pool serves the next request on a new connection.
    assert.equal((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one, 1);
  } finally {
    await admin.end();
    await pool.end();
  }
});
