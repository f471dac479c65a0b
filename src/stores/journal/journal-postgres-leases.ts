/**
 * Rebroadcast ownership in PostgreSQL (`SubmissionLeases`, journal.ts): each submission row
 * names the gateway that follows it (`owner`), and each gateway holds one lease of its own
 * in `journal_gateways`, on the database's clock so that every gateway reads the same time.
 * A submission is held while its gateway's lease runs (or, for a row just written and for
 * rows of gateways older than this table, its own `lease_until`).
 *
 * Renewal is one row a second whatever a gateway follows: renewing every unfinished row
 * instead rewrote each submission every second of its life (a hundred thousand rows a second
 * at 5,000 submissions a second followed for 20 s), which cost PostgreSQL more than the
 * submissions' own inserts. Takeover looks at submissions only when some gateway's lease has
 * run out, and at start (then every FULL_SCAN_ROUNDS rounds) for what no live gateway holds
 * at all; it skips rows another gateway is taking at the same moment.
 */
import type pg from 'pg';
import type { SubmissionLeases } from './journal';
import { migrate, type PostgresMigrations } from '../database/postgres-database';
import { DB_NOW, LEASE_MS, UNFINISHED } from './journal-postgres-schema';
import type { SelectEntries } from './journal-postgres-reads';

/** The gateways' leases: a component of its own beside the journal's tables. */
const MIGRATIONS: PostgresMigrations = [`CREATE TABLE journal_gateways (owner TEXT PRIMARY KEY, lease_until BIGINT NOT NULL);`];
/** A renewal that finds less than this left of its lease looks for submissions taken meanwhile. */
const RENEWAL_MARGIN_MS = 1_000;
/** …for this many rounds, so that a takeover still in flight at the renewal is seen by the next. */
const LOST_CHECK_ROUNDS = 2;
/** Every this many takeover rounds (and the first), rows of any gateway without a live lease are looked for, not only of those whose lease ran out. */
const FULL_SCAN_ROUNDS = 30;

const LIVE_OWNERS = `SELECT owner FROM journal_gateways WHERE lease_until >= ${DB_NOW}`;
const DEAD_OWNERS = `SELECT owner FROM journal_gateways WHERE lease_until < ${DB_NOW}`;
/** Rows' own leases (written with the row; renewed by gateways older than journal_gateways). */
const ROW_LEASE_OVER = `(lease_until IS NULL OR lease_until < ${DB_NOW})`;

/** Brings the gateways' lease table to the latest version and takes this gateway's lease. */
export async function registerGateway(pool: pg.Pool, schema: string, owner: string): Promise<void> {
  await migrate(pool, schema, 'journal_gateways', MIGRATIONS);
  await pool.query(
    `INSERT INTO journal_gateways (owner, lease_until) VALUES ($1, ${DB_NOW} + $2)
     ON CONFLICT (owner) DO UPDATE SET lease_until = EXCLUDED.lease_until`,
    [owner, LEASE_MS],
  );
}

export function createPostgresLeases(pool: pg.Pool, owner: string, select: SelectEntries): SubmissionLeases {
  let lostChecks = 0;
  let round = 0;

  const takeOverWhere = async (where: string, limit: number): Promise<number[]> =>
    (
      await pool.query<{ seq: number }>(
        `UPDATE submissions SET owner = $1, lease_until = ${DB_NOW} + $2
         WHERE seq IN (
           SELECT seq FROM submissions
           WHERE seq IN (${UNFINISHED}) AND ${ROW_LEASE_OVER} AND ${where}
           ORDER BY seq LIMIT $3
           FOR UPDATE SKIP LOCKED)
         RETURNING seq`,
        [owner, LEASE_MS, limit],
      )
    ).rows.map((r) => r.seq);

  return {
    async renew(following) {
      // The lease left before this renewal: none (the row is gone, taken over and cleared), or little, means others may have taken submissions.
      const { rows } = await pool.query<{ left: number | null }>(
        `WITH old AS (SELECT lease_until FROM journal_gateways WHERE owner = $1 FOR UPDATE)
         INSERT INTO journal_gateways (owner, lease_until) VALUES ($1, ${DB_NOW} + $2)
         ON CONFLICT (owner) DO UPDATE SET lease_until = EXCLUDED.lease_until
         RETURNING (SELECT lease_until FROM old) - ${DB_NOW} AS left`,
        [owner, LEASE_MS],
      );
      const left = rows[0]?.left ?? null;
      if (left === null || left < RENEWAL_MARGIN_MS) lostChecks = LOST_CHECK_ROUNDS;
      if (lostChecks === 0 || following.length === 0) return [];
      lostChecks -= 1;
      return (
        await pool.query<{ seq: number }>('SELECT seq FROM submissions WHERE seq = ANY($1::bigint[]) AND owner IS DISTINCT FROM $2', [
          following,
          owner,
        ])
      ).rows.map((r) => r.seq);
    },
    async takeOver(limit) {
      const full = round++ % FULL_SCAN_ROUNDS === 0;
      let taken: number[];
      if (full) {
        taken = await takeOverWhere(`(owner IS NULL OR owner NOT IN (${LIVE_OWNERS}))`, limit);
      } else {
        // Nothing to look at while every gateway's lease runs: one read of a small table.
        const dead = await pool.query(`${DEAD_OWNERS} LIMIT 1`);
        if (dead.rows.length === 0) return [];
        taken = await takeOverWhere(`owner IN (${DEAD_OWNERS})`, limit);
      }
      if (taken.length < limit) {
        // A gateway whose lease ran out and that follows nothing any more is forgotten.
        await pool.query(
          `DELETE FROM journal_gateways g WHERE g.lease_until < ${DB_NOW}
           AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.owner = g.owner AND s.seq IN (${UNFINISHED}))`,
        );
      }
      if (taken.length === 0) return [];
      return select('SELECT * FROM submissions WHERE seq = ANY($1::bigint[]) ORDER BY seq', [taken]);
    },
  };
}
