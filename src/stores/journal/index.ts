/**
 * The submission journal's public surface: the one file of `stores/journal/` that the rest
 * of Slipway (and its benches and other folders' tests) may import;
 * test/suite/import-order.test.ts refuses an import that reaches past it.
 *
 * It holds the interface and the row types (journal.ts), the opener the configuration
 * chooses with (open-journal.ts), the counting decorator (counting-journal.ts), and the two
 * adapters for tests and benches that open a journal on a file or schema of their own
 * (journal-sqlite.ts: the log, its applier thread and the signature index; journal-postgres.ts).
 * Everything else in the folder is the adapters' own.
 */
export * from './journal';
export { openJournal } from './open-journal';
export { countingJournal, type EndedTransaction } from './counting-journal';
export { createSqliteJournal, type SqliteJournalOptions } from './journal-sqlite';
export { createPostgresJournal } from './journal-postgres';
