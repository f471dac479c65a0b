/** Idempotency keys in PostgreSQL, beside the journal: every gateway of a cluster finds every key's records. */
import { toRecord, type Claim, type IdempotencyStore, type Row } from './idempotency-store';
import { openPostgres, type PostgresMigrations } from './database/postgres-database';

const MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE idempotency_keys (
     key_id TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     operation TEXT NOT NULL,
     signatures TEXT NOT NULL,
     bundle_id TEXT,
     answer TEXT,
     created_at BIGINT NOT NULL,
     claimed_at BIGINT NOT NULL,
     PRIMARY KEY (key_id, idempotency_key)
   );
   CREATE INDEX idempotency_keys_created_at ON idempotency_keys(created_at);`,
];

const COLUMNS = 'fingerprint, operation, signatures, bundle_id, answer, created_at, claimed_at';

export async function createPostgresIdempotencyStore(url: string, schema: string): Promise<IdempotencyStore> {
  const pool = await openPostgres(url, schema, { component: 'idempotency', migrations: MIGRATIONS, connections: 4 });
  const select = async (keyId: string, key: string) =>
    (await pool.query<Row>(`SELECT ${COLUMNS} FROM idempotency_keys WHERE key_id = $1 AND idempotency_key = $2`, [keyId, key])).rows[0];

  const store: IdempotencyStore = {
    async claim(keyId, key, record, now, expiredBefore): Promise<Claim> {
      // One statement: of two gateways claiming at once, one inserts and the other sees its row.
      const written = await pool.query(
        `INSERT INTO idempotency_keys (key_id, idempotency_key, fingerprint, operation, signatures, bundle_id, answer, created_at, claimed_at)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $7)
         ON CONFLICT (key_id, idempotency_key) DO UPDATE SET
           fingerprint = EXCLUDED.fingerprint, operation = EXCLUDED.operation, signatures = EXCLUDED.signatures,
           bundle_id = EXCLUDED.bundle_id, answer = NULL, created_at = EXCLUDED.created_at, claimed_at = EXCLUDED.claimed_at
         WHERE idempotency_keys.created_at < $8`,
        [keyId, key, record.fingerprint, record.operation, record.signatures.join(','), record.bundleId, now, expiredBefore],
      );
      if (written.rowCount === 1) return { claimed: true };
      const row = await select(keyId, key);
      return row === undefined ? store.claim(keyId, key, record, now, expiredBefore) : { claimed: false, existing: toRecord(row) };
    },
    async takeOver(keyId, key, claimedAt, now) {
      const taken = await pool.query(
        'UPDATE idempotency_keys SET claimed_at = $1 WHERE key_id = $2 AND idempotency_key = $3 AND claimed_at = $4 AND answer IS NULL',
        [now, keyId, key, claimedAt],
      );
      return taken.rowCount === 1;
    },
    async answer(keyId, key, value) {
      await pool.query('UPDATE idempotency_keys SET answer = $1 WHERE key_id = $2 AND idempotency_key = $3', [value, keyId, key]);
    },
    async release(keyId, key) {
      await pool.query('DELETE FROM idempotency_keys WHERE key_id = $1 AND idempotency_key = $2 AND answer IS NULL', [keyId, key]);
    },
    async get(keyId, key) {
      const row = await select(keyId, key);
      return row === undefined ? null : toRecord(row);
    },
    async purge(before) {
      return (await pool.query('DELETE FROM idempotency_keys WHERE created_at < $1', [before])).rowCount ?? 0;
    },
    async close() {
      await pool.end();
    },
  };
  return store;
}
