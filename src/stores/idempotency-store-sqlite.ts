/**
 * Idempotency keys in SQLite, in a file of their own in the data dir (the journal's file has a
 * single writer thread; these are written on the request's thread, and only by requests
 * that carry the header). WAL with synchronous=NORMAL: a claim or answer survives kill -9.
 */
import { toRecord, type Claim, type IdempotencyStore, type NewIdempotencyRecord, type Row } from './idempotency-store';
import { openSqlite, type Migrations } from './database/sqlite-database';

const MIGRATIONS: Migrations = [
  `CREATE TABLE idempotency_keys (
     key_id TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     operation TEXT NOT NULL,
     signatures TEXT NOT NULL,
     bundle_id TEXT,
     answer TEXT,
     created_at INTEGER NOT NULL,
     claimed_at INTEGER NOT NULL,
     PRIMARY KEY (key_id, idempotency_key)
   ) WITHOUT ROWID;
   CREATE INDEX idempotency_keys_created_at ON idempotency_keys(created_at);`,
];

export function createSqliteIdempotencyStore(file: string): IdempotencyStore {
  const db = openSqlite(file, MIGRATIONS);
  // A record past its time is replaced as if it were not there.
  const insert = db.prepare<[string, string, string, string, string, string | null, number, number, number]>(
    `INSERT INTO idempotency_keys (key_id, idempotency_key, fingerprint, operation, signatures, bundle_id, answer, created_at, claimed_at)
     VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)
     ON CONFLICT (key_id, idempotency_key) DO UPDATE SET
       fingerprint = excluded.fingerprint, operation = excluded.operation, signatures = excluded.signatures,
       bundle_id = excluded.bundle_id, answer = NULL, created_at = excluded.created_at, claimed_at = excluded.claimed_at
     WHERE idempotency_keys.created_at < ?`,
  );
  const select = db.prepare<[string, string], Row>(
    'SELECT fingerprint, operation, signatures, bundle_id, answer, created_at, claimed_at FROM idempotency_keys WHERE key_id = ? AND idempotency_key = ?',
  );
  const takeOver = db.prepare<[number, string, string, number]>(
    'UPDATE idempotency_keys SET claimed_at = ? WHERE key_id = ? AND idempotency_key = ? AND claimed_at = ? AND answer IS NULL',
  );
  const answer = db.prepare<[string, string, string]>('UPDATE idempotency_keys SET answer = ? WHERE key_id = ? AND idempotency_key = ?');
  const release = db.prepare<[string, string]>('DELETE FROM idempotency_keys WHERE key_id = ? AND idempotency_key = ? AND answer IS NULL');
  const purge = db.prepare<[number]>('DELETE FROM idempotency_keys WHERE created_at < ?');

  const store: IdempotencyStore = {
    async claim(keyId, key, record: NewIdempotencyRecord, now, expiredBefore): Promise<Claim> {
      const { fingerprint, operation, signatures, bundleId } = record;
      const written = insert.run(keyId, key, fingerprint, operation, signatures.join(','), bundleId, now, now, expiredBefore);
      if (written.changes === 1) return { claimed: true };
      const row = select.get(keyId, key);
      // Deleted between the two statements (released by another connection): claim again.
      return row === undefined ? store.claim(keyId, key, record, now, expiredBefore) : { claimed: false, existing: toRecord(row) };
    },
    async takeOver(keyId, key, claimedAt, now) {
      return takeOver.run(now, keyId, key, claimedAt).changes === 1;
    },
    async answer(keyId, key, value) {
      answer.run(value, keyId, key);
    },
    async release(keyId, key) {
      release.run(keyId, key);
    },
    async get(keyId, key) {
      const row = select.get(keyId, key);
      return row === undefined ? null : toRecord(row);
    },
    async purge(before) {
      return purge.run(before).changes;
    },
    async close() {
      db.close();
    },
  };
  return store;
}
