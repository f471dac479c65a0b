/**
 * Refusal counts in PostgreSQL, in the journal's schema: every gateway of a cluster adds its
 * own, so the report covers them all. One statement per flush, whatever its rows.
 */
import type { RefusalCount, RefusalCounts } from './refusal-counts';
import { minuteOf } from './refusal-counts';
import { openPostgres, type PostgresMigrations } from './database/postgres-database';

const MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE refusal_counts (
     key_id TEXT NOT NULL,
     operation TEXT NOT NULL,
     reason_code TEXT NOT NULL,
     minute BIGINT NOT NULL,
     count BIGINT NOT NULL,
     PRIMARY KEY (key_id, operation, reason_code, minute)
   );
   CREATE INDEX refusal_counts_minute ON refusal_counts (minute);`,
];

export async function createPostgresRefusalCounts(url: string, schema: string): Promise<RefusalCounts> {
  const pool = await openPostgres(url, schema, { component: 'refusal_counts', migrations: MIGRATIONS, connections: 2 });
  return {
    async add(counts: readonly RefusalCount[]) {
      if (counts.length === 0) return;
      await pool.query(
        `INSERT INTO refusal_counts (key_id, operation, reason_code, minute, count)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
         ON CONFLICT (key_id, operation, reason_code, minute) DO UPDATE SET count = refusal_counts.count + EXCLUDED.count`,
        [
          counts.map((c) => c.keyId),
          counts.map((c) => c.operation),
          counts.map((c) => c.reasonCode),
          counts.map((c) => c.minute),
          counts.map((c) => c.count),
        ],
      );
    },
    async totals({ sinceMs, keyId }) {
      const values: unknown[] = [minuteOf(sinceMs)];
      if (keyId !== undefined) values.push(keyId);
      const { rows } = await pool.query<Omit<RefusalCount, 'minute'>>(
        `SELECT key_id AS "keyId", operation, reason_code AS "reasonCode", SUM(count)::bigint AS count FROM refusal_counts
         WHERE minute >= $1${keyId === undefined ? '' : ' AND key_id = $2'} GROUP BY key_id, operation, reason_code`,
        values,
      );
      return rows;
    },
    async close() {
      await pool.end();
    },
  };
}
