/**
 * The journal the configuration names: PostgreSQL when `postgresUrl` is set (shared by a
 * cluster), else SQLite in the data dir (database/open-store.ts). `reader`: for
 * `bin/slipway submissions` beside a running server (SQLite needs to know; PostgreSQL serves
 * readers as it serves writers).
 */
import type { SlipwayConfig } from '../../config/config';
import { openStore } from '../database/open-store';
import type { Journal } from './journal';
import { createPostgresJournal } from './journal-postgres';
import { createSqliteJournal } from './journal-sqlite';

export function openJournal(config: SlipwayConfig, options: { reader?: boolean } = {}): Promise<Journal> {
  return openStore(config, {
    name: 'the journal',
    sqlite: (paths) => createSqliteJournal(paths.journal, { synchronous: config.journalSync, reader: options.reader }),
    postgres: (url, schema) => createPostgresJournal(url, schema),
  });
}
