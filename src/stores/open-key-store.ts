/** The key store the configuration names: PostgreSQL when `postgresUrl` is set, else SQLite in the data dir. The server and the CLI open it the same way. */
import { dataPaths, type SlipwayConfig } from '../config/config';
import { prepareDataDir } from './database/data-dir';
import type { KeyStore } from './key-store';
import { createPostgresKeyStore } from './key-store-postgres';
import { createSqliteKeyStore } from './key-store-sqlite';
import { withoutPassword } from './database/postgres-database';

export async function openKeyStore(config: SlipwayConfig): Promise<KeyStore> {
  if (config.postgresUrl === '') {
    prepareDataDir(config.dataDir);
    return createSqliteKeyStore(dataPaths(config.dataDir).keys);
  }
  try {
    return await createPostgresKeyStore(config.postgresUrl, config.postgresSchema);
  } catch (error) {
    throw new Error(
      `cannot open the key store in PostgreSQL at ${withoutPassword(config.postgresUrl)} (schema ${config.postgresSchema}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
