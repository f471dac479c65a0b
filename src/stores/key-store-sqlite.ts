/**
 * API keys in SQLite. Changes made by another process (the CLI) are seen through
 * `PRAGMA data_version`, which SQLite bumps when another connection commits: polling it
 * is a cheap read, so the server picks up a change well within a second.
 */
import type { Migrations } from './database/sqlite-database';
import { openSqlite } from './database/sqlite-database';
import type { ApiKeyRecord, KeyStore, StoredKey } from './key-store';
import { generateApiKey, generateKeyId, hashApiKey } from './key-store';

const MIGRATIONS: Migrations = [
  `CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     key_hash BLOB NOT NULL UNIQUE,
     bundle INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );`,
  // Per-key rate limits (NULL: none).
  `ALTER TABLE api_keys ADD COLUMN tps INTEGER;
   ALTER TABLE api_keys ADD COLUMN bundles_per_second INTEGER;`,
  `ALTER TABLE api_keys ADD COLUMN reads_per_second INTEGER;`,
  // The key's webhook and its signing secret (NULL: none).
  `ALTER TABLE api_keys ADD COLUMN webhook_url TEXT;
   ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT;`,
];

const WATCH_INTERVAL_MS = 200;

interface Row {
  id: string;
  name: string;
  key_hash: Buffer;
  bundle: number;
  created_at: string;
  revoked_at: string | null;
  tps: number | null;
  bundles_per_second: number | null;
  reads_per_second: number | null;
  webhook_url: string | null;
  webhook_secret: string | null;
}

const toRecord = (row: Row): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  bundle: row.bundle === 1,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  tps: row.tps,
  bundlesPerSecond: row.bundles_per_second,
  readsPerSecond: row.reads_per_second,
  webhookUrl: row.webhook_url,
});

export function createSqliteKeyStore(file: string): KeyStore {
  const db = openSqlite(file, MIGRATIONS);
  const insert = db.prepare(
    'INSERT INTO api_keys (id, name, key_hash, bundle, created_at, tps, bundles_per_second, reads_per_second, webhook_url, webhook_secret) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const selectAll = db.prepare('SELECT * FROM api_keys ORDER BY created_at, id');
  const selectActive = db.prepare('SELECT * FROM api_keys WHERE revoked_at IS NULL');
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const exists = db.prepare('SELECT 1 FROM api_keys WHERE id = ?');
  const columns = { bundle: 'bundle', tps: 'tps', bundlesPerSecond: 'bundles_per_second', readsPerSecond: 'reads_per_second' } as const;
  const watchers = new Set<() => void>();
  const notify = () => watchers.forEach((watcher) => watcher());

  return {
    async create({ name, bundle, tps = null, bundlesPerSecond = null, readsPerSecond = null, webhook = null }) {
      const key = generateApiKey();
      const row: Row = {
        id: generateKeyId(),
        name,
        key_hash: hashApiKey(key),
        bundle: bundle ? 1 : 0,
        created_at: new Date().toISOString(),
        revoked_at: null,
        tps,
        bundles_per_second: bundlesPerSecond,
        reads_per_second: readsPerSecond,
        webhook_url: webhook?.url ?? null,
        webhook_secret: webhook?.secret ?? null,
      };
      insert.run(
        row.id,
        row.name,
        row.key_hash,
        row.bundle,
        row.created_at,
        row.tps,
        row.bundles_per_second,
        row.reads_per_second,
        row.webhook_url,
        row.webhook_secret,
      );
      notify();
      return { record: toRecord(row), key };
    },
    async createFirst(input) {
      // One connection, one process: the check and the insert cannot interleave with another start's
      // (a second process opening the same file would serialize on SQLite's write lock).
      const count = (db.prepare('SELECT COUNT(*) AS n FROM api_keys').get() as { n: number }).n;
      return count === 0 ? this.create(input) : null;
    },
    async list() {
      return (selectAll.all() as Row[]).map(toRecord);
    },
    async revoke(id) {
      const changed = revoke.run(new Date().toISOString(), id).changes > 0;
      if (changed) notify();
      return changed || exists.get(id) !== undefined;
    },
    async update(id, changes) {
      const fields = (Object.keys(columns) as (keyof typeof columns)[]).filter((field) => changes[field] !== undefined);
      const sets = fields.map((field) => `${columns[field]} = ?`);
      const values: unknown[] = fields.map((field) => (field === 'bundle' ? (changes.bundle ? 1 : 0) : changes[field]));
      if (changes.webhook !== undefined) {
        sets.push('webhook_url = ?', 'webhook_secret = ?');
        values.push(changes.webhook?.url ?? null, changes.webhook?.secret ?? null);
      }
      if (sets.length === 0) return exists.get(id) !== undefined;
      const changed = db.prepare(`UPDATE api_keys SET ${sets.join(', ')} WHERE id = ?`).run(...values, id).changes > 0;
      if (changed) notify();
      return changed;
    },
    async loadActive(): Promise<StoredKey[]> {
      return (selectActive.all() as Row[]).map((row) => ({ record: toRecord(row), hash: row.key_hash, webhookSecret: row.webhook_secret }));
    },
    watch(onChange) {
      watchers.add(onChange);
      let version = db.pragma('data_version', { simple: true }) as number;
      const timer = setInterval(() => {
        const now = db.pragma('data_version', { simple: true }) as number;
        if (now !== version) {
          version = now;
          onChange();
        }
      }, WATCH_INTERVAL_MS);
      timer.unref();
      return () => {
        clearInterval(timer);
        watchers.delete(onChange);
      };
    },
    async close() {
      db.close();
    },
  };
}
