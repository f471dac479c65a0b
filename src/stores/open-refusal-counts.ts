/** The refusal counts the configuration names: beside the journal, in PostgreSQL when `postgresUrl` is set, else in the data dir. */
import { dataPaths, type SlipwayConfig } from '../config/config';
import { prepareDataDir } from './database/data-dir';
import { withoutPassword } from './database/postgres-database';
import type { RefusalCounts } from './refusal-counts';
import { createPostgresRefusalCounts } from './refusal-counts-postgres';
import { createSqliteRefusalCounts } from './refusal-counts-sqlite';

export async function openRefusalCounts(config: SlipwayConfig): Promise<RefusalCounts> {
  if (config.postgresUrl === '') {
    prepareDataDir(config.dataDir);
    return createSqliteRefusalCounts(dataPaths(config.dataDir).refusals);
  }
  try {
    return await createPostgresRefusalCounts(config.postgresUrl, config.postgresSchema);
  } catch (error) {
    throw new Error(
      `cannot open the refusal counts in PostgreSQL at ${withoutPassword(config.postgresUrl)} (schema ${config.postgresSchema}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
