/**
 * The SQLite journal's read statements, prepared once when it opens (its writes are the
 * applier's, journal-sqlite-schema.ts). One place for the SQL its reads and its start-up run.
 */
import type Database from 'better-sqlite3';
import type { SqliteDatabase } from '../database/sqlite-database';
import { SELECT_UNFINISHED } from './journal-queries';

export interface JournalStatements {
  readonly selectAfter: Database.Statement;
  readonly selectFrom: Database.Statement;
  readonly selectCreatedAt: Database.Statement;
  readonly selectUnfinished: Database.Statement;
  readonly selectSends: Database.Statement;
  readonly selectByBundle: Database.Statement;
  readonly selectSubmission: Database.Statement;
  readonly selectUnindexed: Database.Statement;
  readonly selectTransactions: Database.Statement;
  readonly selectLastSeq: Database.Statement;
}

export function prepareJournalStatements(db: SqliteDatabase): JournalStatements {
  return {
    selectAfter: db.prepare('SELECT * FROM submissions WHERE seq > ? ORDER BY seq'),
    selectFrom: db.prepare('SELECT * FROM submissions WHERE seq >= ? ORDER BY seq'),
    selectCreatedAt: db.prepare('SELECT seq, created_at FROM submissions WHERE seq >= ? ORDER BY seq LIMIT 1'),
    selectUnfinished: db.prepare(SELECT_UNFINISHED),
    selectSends: db.prepare('SELECT position, evidence FROM protected_sends WHERE seq = ? ORDER BY rowid'),
    selectByBundle: db.prepare('SELECT seq FROM submissions WHERE bundle_id = ?'),
    selectSubmission: db.prepare('SELECT * FROM submissions WHERE seq = ?'),
    selectUnindexed: db.prepare('SELECT seq, wire FROM submission_transactions WHERE seq > ? ORDER BY seq, position'),
    selectTransactions: db.prepare('SELECT * FROM submission_transactions WHERE seq = ? ORDER BY position'),
    selectLastSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM submissions'),
  };
}

/** The highest sequence number SQLite holds, 0 when empty. */
export const lastSeqIn = (statements: JournalStatements): number => (statements.selectLastSeq.get() as { seq: number }).seq;
