/**
 * PostgreSQL for the shared stores: one pool per store, every connection working in the
 * configured schema (so that several deployments, or test runs, share one database), and
 * versioned migrations per component, run in one transaction under an advisory lock so that
 * instances starting together migrate once.
 */
import { checkSchemaName } from '../../config/config';
import pg from 'pg';

/** Each entry migrates from version i to i + 1; entries are never edited once released. */
export type PostgresMigrations = readonly string[];

export interface PostgresOptions {
  readonly url: string;
  /** A schema name: letters, digits and _. */
  readonly schema: string;
  readonly max?: number;
  /** Session settings for every connection (names and values of letters, digits and _), e.g. `plan_cache_mode`. */
  readonly settings?: Readonly<Record<string, string>>;
}

// BIGINT columns (sequence numbers, slots, epoch milliseconds) stay below 2^53: read them as numbers, not strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createPool({ url, schema, max = 10, settings = {} }: PostgresOptions): pg.Pool {
  const extra = Object.entries(settings).map(([name, value]) => {
    if (!/^\w+$/.test(name) || !/^\w+$/.test(value)) throw new Error(`not a PostgreSQL setting: ${name}=${value}`);
    return ` -c ${name}=${value}`;
  });
  const pool = new pg.Pool({
    connectionString: url,
    max,
    options: `-c search_path=${checkSchemaName(schema)}${extra.join('')}`,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 30_000,
  });
  // A connection that breaks while idle is dropped by the pool; requests meanwhile fail on their own.
  pool.on('error', () => {});
  // One that breaks while checked out (a journal commit when PostgreSQL restarts) emits 'error'
  // on itself, where the pool listens no more: unheard, that error would end the process. Its
  // queries fail with it, and the caller is told that way.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** A service's URL fit for messages and logs: its password replaced. */
export function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/** Runs `work` in one transaction on one pooled connection: committed if it returns, rolled back if it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Creates the schema if needed and brings `component`'s tables to the latest version. */
export async function migrate(pool: pg.Pool, schema: string, component: string, migrations: PostgresMigrations): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${checkSchemaName(schema)}`);
    await client.query('CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    const row = await client.query<{ version: number }>('SELECT version FROM schema_versions WHERE component = $1', [component]);
    const current = row.rows[0]?.version ?? 0;
    if (current > migrations.length) {
      throw new Error(
        `the ${component} tables in schema ${schema} are at version ${current}, newer than this Slipway knows (${migrations.length}); upgrade Slipway`,
      );
    }
    for (let version = current; version < migrations.length; version++) await client.query(migrations[version]!);
    await client.query(
      'INSERT INTO schema_versions (component, version) VALUES ($1, $2) ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version',
      [component, migrations.length],
    );
  });
}

/** How a store lives in PostgreSQL: its name in schema_versions, its migrations, and how many connections its pool keeps. */
export interface PostgresTables {
  readonly component: string;
  readonly migrations: PostgresMigrations;
  readonly connections: number;
}

/** A store's pool in `schema`, its tables brought to the latest version first; the pool is ended if they cannot be. */
export async function openPostgres(url: string, schema: string, tables: PostgresTables): Promise<pg.Pool> {
  const pool = createPool({ url, schema, max: tables.connections });
  try {
    await migrate(pool, schema, tables.component, tables.migrations);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return pool;
}
