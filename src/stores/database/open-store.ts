/**
 * Opens a store where the configuration puts it: in PostgreSQL when `postgresUrl` is set
 * (shared by the gateways of a cluster), else in SQLite, in the data directory (made
 * owner-only first). The server and the CLI open every store this way; each store gives its
 * two adapters (stores/store-adapters.ts, and the journal's in journal/open-journal.ts), and
 * its PostgreSQL adapter brings its own tables up to date (`openPostgres`).
 */
import { dataPaths, type SlipwayConfig } from '../../config/config';
import { prepareDataDir } from './data-dir';
import { withoutPassword } from './postgres-database';

/** The files of the data directory, one a store. */
export type DataPaths = ReturnType<typeof dataPaths>;

export interface StoreAdapters<T> {
  /** The store as a message names it: "the key store". */
  readonly name: string;
  /** Opens it in SQLite, once the data directory is ready. */
  readonly sqlite: (paths: DataPaths) => T;
  /** Opens it in PostgreSQL, in `schema`. */
  readonly postgres: (url: string, schema: string) => Promise<T>;
}

export async function openStore<T>(config: SlipwayConfig, store: StoreAdapters<T>): Promise<T> {
  if (config.postgresUrl === '') {
    prepareDataDir(config.dataDir);
    return store.sqlite(dataPaths(config.dataDir));
  }
  try {
    return await store.postgres(config.postgresUrl, config.postgresSchema);
  } catch (error) {
    throw new Error(
      `cannot open ${store.name} in PostgreSQL at ${withoutPassword(config.postgresUrl)} (schema ${config.postgresSchema}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
