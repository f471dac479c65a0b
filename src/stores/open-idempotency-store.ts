/** The idempotency store the configuration names: PostgreSQL when `postgresUrl` is set (shared by a cluster), else SQLite in the data dir. */
import { dataPaths, type SlipwayConfig } from '../config/config';
import { prepareDataDir } from './database/data-dir';
import type { IdempotencyStore } from './idempotency-store';
import { createPostgresIdempotencyStore } from './idempotency-store-postgres';
import { createSqliteIdempotencyStore } from './idempotency-store-sqlite';
import { withoutPassword } from './database/postgres-database';

export async function openIdempotencyStore(config: SlipwayConfig): Promise<IdempotencyStore> {
  if (config.postgresUrl === '') {
    prepareDataDir(config.dataDir);
    return createSqliteIdempotencyStore(dataPaths(config.dataDir).idempotency);
  }
  try {
    return await createPostgresIdempotencyStore(config.postgresUrl, config.postgresSchema);
  } catch (error) {
    throw new Error(
      `cannot open the idempotency keys in PostgreSQL at ${withoutPassword(config.postgresUrl)} (schema ${config.postgresSchema}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
