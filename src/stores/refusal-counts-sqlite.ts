/**
 * Refusal counts in SQLite: a file of their own in the data dir (`refusals.sqlite`), so that
 * their writes (once a second, from the request thread) never wait for the journal applier's
 * lock on the journal, and `bin/slipway report` reads them beside a running server.
 */
import type { RefusalCount, RefusalCounts } from './refusal-counts';
import { minuteOf } from './refusal-counts';
import { openSqlite, type Migrations } from './database/sqlite-database';

const MIGRATIONS: Migrations = [
  `CREATE TABLE refusal_counts (
     key_id TEXT NOT NULL,
     operation TEXT NOT NULL,
     reason_code TEXT NOT NULL,
     minute INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (key_id, operation, reason_code, minute)
   ) WITHOUT ROWID;
   CREATE INDEX refusal_counts_minute ON refusal_counts (minute);`,
];

export function createSqliteRefusalCounts(file: string): RefusalCounts {
  const db = openSqlite(file, MIGRATIONS);
  const upsert = db.prepare(
    `INSERT INTO refusal_counts (key_id, operation, reason_code, minute, count) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (key_id, operation, reason_code, minute) DO UPDATE SET count = count + excluded.count`,
  );
  const addAll = db.transaction((counts: readonly RefusalCount[]) => {
    for (const c of counts) upsert.run(c.keyId, c.operation, c.reasonCode, c.minute, c.count);
  });
  const totals = (keyed: boolean) =>
    db.prepare(
      `SELECT key_id AS keyId, operation, reason_code AS reasonCode, SUM(count) AS count FROM refusal_counts
       WHERE minute >= ?${keyed ? ' AND key_id = ?' : ''} GROUP BY key_id, operation, reason_code`,
    );
  const all = totals(false);
  const ofKey = totals(true);
  return {
    async add(counts) {
      if (counts.length > 0) addAll(counts);
    },
    async totals({ sinceMs, keyId }) {
      const since = minuteOf(sinceMs);
      return (keyId === undefined ? all.all(since) : ofKey.all(since, keyId)) as Omit<RefusalCount, 'minute'>[];
    },
    async close() {
      db.close();
    },
  };
}
