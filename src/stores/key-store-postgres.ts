/**
 * API keys in PostgreSQL, shared by every gateway of a cluster. A change (made by any
 * instance or by `bin/slipway keys`) is announced with NOTIFY in the transaction that makes
 * it; each instance LISTENs on its own connection and reloads at once. A broken listening
 * connection is opened again, and the instance reloads then too, so that a change made
 * meanwhile is not missed.
 */
import type pg from 'pg';
import type { KeyChanges, KeyStore, StoredKey } from './key-store';
import { generateApiKey, generateKeyId, hashApiKey } from './key-store';
import { inTransaction, openPostgres } from './database/postgres-database';
import { COLUMNS, MIGRATIONS, toRecord, type Row } from './key-store-postgres-schema';
import { listenForChanges } from './key-store-postgres-listen';

export async function createPostgresKeyStore(url: string, schema: string): Promise<KeyStore> {
  const pool = await openPostgres(url, schema, { component: 'keys', migrations: MIGRATIONS, connections: 4 });
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
    async create({ name, bundle, tps = null, bundlesPerSecond = null, readsPerSecond = null, webhook = null }) {
      const key = generateApiKey();
      const id = generateKeyId();
      const createdAt = new Date();
      await change(
        'INSERT INTO api_keys (id, name, key_hash, bundle, tps, bundles_per_second, reads_per_second, webhook_url, webhook_secret, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
        [
          id,
          name,
          hashApiKey(key),
          bundle,
          tps,
          bundlesPerSecond,
          readsPerSecond,
          webhook?.url ?? null,
          webhook?.secret ?? null,
          createdAt,
        ],
      );
      return {
        record: {
          id,
          name,
          bundle,
          tps,
          bundlesPerSecond,
          readsPerSecond,
          webhookUrl: webhook?.url ?? null,
          createdAt: createdAt.toISOString(),
          revokedAt: null,
        },
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
          webhookUrl: null,
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
      const columns: string[] = fields.map((field) => COLUMNS[field]);
      const values: unknown[] = fields.map((field) => changes[field]);
      if (changes.webhook !== undefined) {
        columns.push('webhook_url', 'webhook_secret');
        values.push(changes.webhook?.url ?? null, changes.webhook?.secret ?? null);
      }
      if (columns.length === 0) return (await pool.query('SELECT 1 FROM api_keys WHERE id = $1', [id])).rowCount! > 0;
      const sets = columns.map((column, i) => `${column} = $${i + 2}`).join(', ');
      return (await change(`UPDATE api_keys SET ${sets} WHERE id = $1`, [id, ...values])) > 0;
    },
    async loadActive(): Promise<StoredKey[]> {
      return (await pool.query<Row>('SELECT * FROM api_keys WHERE revoked_at IS NULL')).rows.map((row) => ({
        record: toRecord(row),
        hash: row.key_hash,
        webhookSecret: row.webhook_secret,
      }));
    },
    watch(onChange) {
      return listenForChanges(pool, channel, listeners, () => closed, onChange);
    },
    async close() {
      closed = true;
      for (const client of listeners) client.release(true);
      listeners.clear();
      await pool.end();
    },
  };
}
