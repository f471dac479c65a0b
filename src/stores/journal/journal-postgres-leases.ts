/**
 * Rebroadcast ownership in PostgreSQL (`SubmissionLeases`, journal.ts): each submission
 * row says which gateway follows it and until when, on the database's clock so that every
 * gateway reads the same time. Renewal and takeover are single statements; a takeover
 * skips rows another gateway is taking at the same moment.
 */
import type pg from 'pg';
import type { SubmissionLeases } from './journal';
import { DB_NOW, LEASE_MS, UNFINISHED } from './journal-postgres-schema';
import type { SelectEntries } from './journal-postgres-reads';

export function createPostgresLeases(pool: pg.Pool, owner: string, select: SelectEntries): SubmissionLeases {
  return {
    async renew(following) {
      await pool.query(`UPDATE submissions SET lease_until = ${DB_NOW} + $1 WHERE owner = $2 AND seq IN (${UNFINISHED})`, [
        LEASE_MS,
        owner,
      ]);
      if (following.length === 0) return [];
      return (
        await pool.query<{ seq: number }>('SELECT seq FROM submissions WHERE seq = ANY($1::bigint[]) AND owner IS DISTINCT FROM $2', [
          following,
          owner,
        ])
      ).rows.map((r) => r.seq);
    },
    async takeOver(limit) {
      const taken = await pool.query<{ seq: number }>(
        `UPDATE submissions SET owner = $1, lease_until = ${DB_NOW} + $2
         WHERE seq IN (
           SELECT seq FROM submissions
           WHERE seq IN (${UNFINISHED}) AND (lease_until IS NULL OR lease_until < ${DB_NOW})
           ORDER BY seq LIMIT $3
           FOR UPDATE SKIP LOCKED)
         RETURNING seq`,
        [owner, LEASE_MS, limit],
      );
      if (taken.rows.length === 0) return [];
      return select('SELECT * FROM submissions WHERE seq = ANY($1::bigint[]) ORDER BY seq', [taken.rows.map((r) => r.seq)]);
    },
  };
}
