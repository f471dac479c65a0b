/**
 * The PostgreSQL key store's table, its rows as read back, and the mapping to an
 * `ApiKeyRecord`: the schema in one place, apart from the store's queries.
 */
import type { ApiKeyRecord } from './key-store';
import type { PostgresMigrations } from './database/postgres-database';

export const MIGRATIONS: PostgresMigrations = [
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
  `ALTER TABLE api_keys ADD COLUMN webhook_url TEXT, ADD COLUMN webhook_secret TEXT`,
];

export interface Row {
  id: string;
  name: string;
  key_hash: Buffer;
  bundle: boolean;
  tps: number | null;
  bundles_per_second: number | null;
  reads_per_second: number | null;
  webhook_url: string | null;
  webhook_secret: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export const toRecord = (row: Row): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  bundle: row.bundle,
  tps: row.tps,
  bundlesPerSecond: row.bundles_per_second,
  readsPerSecond: row.reads_per_second,
  webhookUrl: row.webhook_url,
  createdAt: row.created_at.toISOString(),
  revokedAt: row.revoked_at === null ? null : row.revoked_at.toISOString(),
});

/** The limits a key's update may change, by the column each is stored in. */
export const COLUMNS = {
  bundle: 'bundle',
  tps: 'tps',
  bundlesPerSecond: 'bundles_per_second',
  readsPerSecond: 'reads_per_second',
} as const;
