/**
 * The journal the configuration names: PostgreSQL when `postgresUrl` is set (shared by a
 * cluster), else SQLite in the data dir. `reader`: for `bin/slipway submissions` beside a
 * running server (SQLite needs to know; PostgreSQL serves readers as it serves writers).
 */
import { dataPaths, type SlipwayConfig } from '../../config/config';
import { prepareDataDir } from '../database/data-dir';
import type { Journal } from './journal';
import { createPostgresJournal } from './journal-postgres';
import { createSqliteJournal } from './journal-sqlite';
import { withoutPassword } from '../database/postgres-database';

export async function openJournal(config: SlipwayConfig, options: { reader?: boolean } = {}): Promise<Journal> {
  if (config.postgresUrl === '') {
    prepareDataDir(config.dataDir);
    return createSqliteJournal(dataPaths(config.dataDir).journal, { synchronous: config.journalSync, reader: options.reader });
  }
  try {
    return await createPostgresJournal(config.postgresUrl, config.postgresSchema);
  } catch (error) {
    throw new Error(
      `cannot open the journal in PostgreSQL at ${withoutPassword(config.postgresUrl)} (schema ${config.postgresSchema}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
