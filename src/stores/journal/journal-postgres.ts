/**
 * The submission journal in PostgreSQL, shared by the gateways of a cluster: the same
 * tables as SQLite's (one row per submission, one per transaction, protected sends with
 * their evidence), and the same group commit: everything written in one turn of the event
 * loop is one PostgreSQL transaction, and each caller's promise resolves after its COMMIT
 * (durable, `synchronous_commit` as the server has it). One group is in flight at a time;
 * writes arriving meanwhile form the next.
 *
 * Sequence numbers come from the table's sequence, allocated for the whole group first, so
 * that every submission keeps the number it is answered with.
 *
 * This file puts the pieces together: the schema (journal-postgres-schema.ts), the group
 * commit (journal-postgres-writes.ts, journal-postgres-group.ts), the reads
 * (journal-postgres-reads.ts) and the leases (journal-postgres-leases.ts).
 */
import crypto from 'node:crypto';
import type { Journal } from './journal';
import { openPostgres } from '../database/postgres-database';
import { MIGRATIONS } from './journal-postgres-schema';
import { createPostgresWrites, createWritePool } from './journal-postgres-writes';
import { createPostgresReads } from './journal-postgres-reads';
import { createPostgresLeases, registerGateway } from './journal-postgres-leases';

export { LEASE_MS } from './journal-postgres-schema';

export async function createPostgresJournal(
  url: string,
  schema: string,
  owner = `gw_${crypto.randomBytes(6).toString('hex')}`,
): Promise<Journal> {
  const pool = await openPostgres(url, schema, { component: 'journal', migrations: MIGRATIONS, connections: 8 });
  try {
    await registerGateway(pool, schema, owner);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const writePool = createWritePool(url, schema);
  const writes = createPostgresWrites(writePool, owner);
  const reads = createPostgresReads(pool);

  return {
    record: writes.record,
    update: writes.update,
    recordSends: writes.recordSends,
    countAttempts: writes.countAttempts,
    after: reads.after,
    since: reads.since,
    unfinished: reads.unfinished,
    find: reads.find,
    list: reads.list,
    leases: createPostgresLeases(pool, owner, reads.select),
    lastSeq: reads.lastSeq,
    landingGroups: reads.landingGroups,
    outcomes: reads.outcomes,
    async close() {
      await writes.drain();
      await writePool.end();
      await pool.end();
    },
  };
}
