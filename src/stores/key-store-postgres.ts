/**
 * API keys in PostgreSQL, shared by every gateway of a cluster. A change (made by any
 * instance or by `bin/slipway keys`) is announced with NOTIFY in the transaction that makes
 * it; each instance LISTENs on its own connection and reloads at once. A broken listening
 * connection is opened again, and the instance reloads then too, so that a change made
 * meanwhile is not missed.
 */
import type pg from 'pg';
import type { ApiKeyRecord, KeyChanges, KeyStore, StoredKey } from './key-store';
import { generateApiKey, generateKeyId, hashApiKey } from './key-store';
import { createPool, inTransaction, migrate, type PostgresMigrations } from './postgres-database';

const MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     key_hash BYTEA NOT NULL UNIQUE,
     bundle BOOLEAN NOT NULL DEFAULT FALSE,
     tps INTEGER,
     bundles_per_second INTEGER,
     created_at TIMESTAMPTZ NOT NULL,
     revoked_at TIMESTAMPTZ
   )`,
  `ALTER TABLE api_keys ADD COLUMN reads_per_second INTEGER`,
];

/** How long to wait before listening again after the connection broke. */
const RELISTEN_MS = 500;

interface Row {
  id: string;
  name: string;
  key_hash: Buffer;
  bundle: boolean;
  tps: number | null;
  bundles_per_second: number | null;
  reads_per_second: number | null;
  created_at: Date;
  revoked_at: Date | null;
}

const toRecord = (row: Row): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  bundle: row.bundle,
  tps: row.tps,
  bundlesPerSecond: row.bundles_per_second,
  readsPerSecond: row.reads_per_second,
  createdAt: row.created_at.toISOString(),
  revokedAt: row.revoked_at === null ? null : row.revoked_at.toISOString(),
});

const COLUMNS = { bundle: 'bundle', tps: 'tps', bundlesPerSecond: 'bundles_per_second', readsPerSecond: 'reads_per_second' } as const;

export async function createPostgresKeyStore(url: string, schema: string): Promise<KeyStore> {
  const pool = createPool({ url, schema, max: 4 });
  try {
    await migrate(pool, schema, 'keys', MIGRATIONS);
  } catch (error) {
    await pool.end();
    throw error;
  }
  // One channel per schema: deployments sharing a database do not hear each other.
  const channel = `slipway_keys_${schema}`.toLowerCase();

  /** Runs `sql` and announces the change in the same transaction. */
  const change = (sql: string, values: unknown[]): Promise<number> =>
    inTransaction(pool, async (client) => {
      const result = await client.query(sql, values);
      await client.query(`NOTIFY ${channel}`);
      return result.rowCount ?? 0;
    });

  let closed = false;
  const listeners = new Set<pg.PoolClient>();

  return {
    async create({ name, bundle, tps = null, bundlesPerSecond = null, readsPerSecond = null }) {
      const key = generateApiKey();
      const id = generateKeyId();
      const createdAt = new Date();
      await change(
        'INSERT INTO api_keys (id, name, key_hash, bundle, tps, bundles_per_second, reads_per_second, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
        [id, name, hashApiKey(key), bundle, tps, bundlesPerSecond, readsPerSecond, createdAt],
      );
      return {
        record: { id, name, bundle, tps, bundlesPerSecond, readsPerSecond, createdAt: createdAt.toISOString(), revokedAt: null },
        key,
      };
    },
    async createFirst({ name, bundle }) {
      const key = generateApiKey();
      const id = generateKeyId();
      const createdAt = new Date();
      // The advisory lock makes the check and the insert one step among instances starting together.
      const inserted = await inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${schema}.api_keys.first`]);
        const result = await client.query(
          'INSERT INTO api_keys (id, name, key_hash, bundle, created_at) SELECT $1, $2, $3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM api_keys)',
          [id, name, hashApiKey(key), bundle, createdAt],
        );
        await client.query(`NOTIFY ${channel}`);
        return result.rowCount ?? 0;
      });
      if (inserted === 0) return null;
      return {
        record: {
          id,
          name,
          bundle,
          tps: null,
          bundlesPerSecond: null,
          readsPerSecond: null,
          createdAt: createdAt.toISOString(),
          revokedAt: null,
        },
        key,
      };
    },
    async list() {
      return (await pool.query<Row>('SELECT * FROM api_keys ORDER BY created_at, id')).rows.map(toRecord);
    },
    async revoke(id) {
      const changed = await change('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      if (changed > 0) return true;
      return (await pool.query('SELECT 1 FROM api_keys WHERE id = $1', [id])).rowCount! > 0;
    },
    async update(id, changes: KeyChanges) {
      const fields = (Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]).filter((field) => changes[field] !== undefined);
      if (fields.length === 0) return (await pool.query('SELECT 1 FROM api_keys WHERE id = $1', [id])).rowCount! > 0;
      const sets = fields.map((field, i) => `${COLUMNS[field]} = $${i + 2}`).join(', ');
      return (await change(`UPDATE api_keys SET ${sets} WHERE id = $1`, [id, ...fields.map((field) => changes[field])])) > 0;
    },
    async loadActive(): Promise<StoredKey[]> {
      return (await pool.query<Row>('SELECT * FROM api_keys WHERE revoked_at IS NULL')).rows.map((row) => ({
        record: toRecord(row),
        hash: row.key_hash,
      }));
    },
    watch(onChange) {
      let current: pg.PoolClient | undefined;
      let stopped = false;
      const listen = async (): Promise<void> => {
        if (stopped || closed) return;
        try {
          const client = await pool.connect();
          current = client;
          listeners.add(client);
          client.on('notification', () => onChange());
          client.on('error', () => {
            listeners.delete(client);
            client.release(true);
            current = undefined;
            setTimeout(() => void listen(), RELISTEN_MS).unref();
          });
          await client.query(`LISTEN ${channel}`);
          // Anything changed while not listening is picked up now.
          onChange();
        } catch {
          setTimeout(() => void listen(), RELISTEN_MS).unref();
        }
      };
      void listen();
      return () => {
        stopped = true;
        if (current !== undefined) {
          listeners.delete(current);
          current.release(true);
          current = undefined;
        }
      };
    },
    async close() {
      closed = true;
      for (const client of listeners) client.release(true);
      listeners.clear();
      await pool.end();
    },
  };
}
