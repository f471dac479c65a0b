/** The journal's schema, and the SQLite transaction that applies groups of writes from the journal log. */
import type { OutcomeReason } from '../../core/outcome-reasons';
import type { NewSubmission, NewTransaction, SendRecord, StateChange } from './journal';
import { comparePositions, type LogPosition } from './journal-log';
import { multiRowInsert, type Migrations, type SqliteDatabase } from '../database/sqlite-database';

export const MIGRATIONS: Migrations = [
  `CREATE TABLE submissions (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL,
     key_id TEXT NOT NULL,
     anti_mev INTEGER NOT NULL,
     bundle_id TEXT,
     routes TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE TABLE submission_transactions (
     seq INTEGER NOT NULL REFERENCES submissions(seq),
     position INTEGER NOT NULL,
     signature TEXT NOT NULL,
     wire BLOB NOT NULL,
     state TEXT NOT NULL,
     slot INTEGER,
     reason TEXT,
     error TEXT,
     attempts INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (seq, position)
   );
   CREATE INDEX submissions_created_at ON submissions(created_at);
   CREATE INDEX submissions_bundle_id ON submissions(bundle_id) WHERE bundle_id IS NOT NULL;
   CREATE TABLE signature_index (prefix INTEGER NOT NULL, seq INTEGER NOT NULL);
   CREATE INDEX signature_index_prefix ON signature_index(prefix);
   CREATE INDEX submission_transactions_unfinished ON submission_transactions(seq)
     WHERE state = 'forwarded';`,
  // Cheaper commits: no AUTOINCREMENT (its sqlite_sequence row was one more page written per
  // commit; rows are never deleted, so sequence numbers are not reused either way), no index
  // on created_at (only start-up asks, and finds its rows by sequence number), and the
  // signature index moved to a file of its own (signature-index-sqlite.ts).
  `CREATE TABLE submissions_v2 (
     seq INTEGER PRIMARY KEY,
     kind TEXT NOT NULL,
     key_id TEXT NOT NULL,
     anti_mev INTEGER NOT NULL,
     bundle_id TEXT,
     routes TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   INSERT INTO submissions_v2 SELECT seq, kind, key_id, anti_mev, bundle_id, routes, created_at, updated_at FROM submissions;
   DROP TABLE submissions;
   ALTER TABLE submissions_v2 RENAME TO submissions;
   CREATE INDEX submissions_bundle_id ON submissions(bundle_id) WHERE bundle_id IS NOT NULL;
   DELETE FROM sqlite_sequence WHERE name = 'submissions';
   DROP TABLE signature_index;`,
  // How far the journal log (journal-log.ts) has been applied to these tables.
  `CREATE TABLE journal_log_position (id INTEGER PRIMARY KEY CHECK (id = 1), file INTEGER NOT NULL, offset INTEGER NOT NULL);
   INSERT INTO journal_log_position (id, file, offset) VALUES (1, 0, 0);`,
  // Protected transactions: held ones are unfinished too, and each send keeps its evidence (JSON).
  `DROP INDEX submission_transactions_unfinished;
   CREATE INDEX submission_transactions_unfinished ON submission_transactions(seq) WHERE state IN ('forwarded', 'held');
   CREATE TABLE protected_sends (seq INTEGER NOT NULL, position INTEGER NOT NULL, evidence TEXT NOT NULL);
   CREATE INDEX protected_sends_seq ON protected_sends(seq);`,
  // The landing report's times: when a transaction landed (epoch ms, estimated from its slot)
  // and how many slots after the one seen at its receipt; null before this and when unknown.
  `ALTER TABLE submission_transactions ADD COLUMN landed_at INTEGER;
   ALTER TABLE submission_transactions ADD COLUMN slots_to_land INTEGER;`,
  // The outcome reason's code (core/outcome-reasons.ts) beside its words. Null in rows written
  // before, whose reason holds `code: words` (or words alone): journal-rows.ts reads those.
  `ALTER TABLE submission_transactions ADD COLUMN reason_code TEXT;`,
];

/**
 * A reason as a frame of the journal log holds it. Frames written before the code had a
 * field of its own carry none: their reason is `code: words` (or words alone, from before the
 * codes), stored so with a null code and read by journal-rows.ts.
 */
type Logged<T> = Omit<T, 'reasonCode' | 'reason'> & { readonly reasonCode?: OutcomeReason | null; readonly reason?: string | null };
export type LoggedSubmission = Omit<NewSubmission, 'transactions'> & { readonly transactions: readonly Logged<NewTransaction>[] };
export type LoggedChange = Logged<StateChange>;

/** One group of writes: one frame of the journal log. Sequence numbers are given by the request thread, the journal's only writer. */
export interface WriteBatch {
  readonly now: number;
  readonly records: readonly { readonly seq: number; readonly submission: LoggedSubmission }[];
  readonly changes: readonly LoggedChange[];
  readonly attempts: readonly { readonly seq: number; readonly position: number }[];
  /** Sends of protected transactions, with their evidence (also the first sends of `records`). */
  readonly sends: readonly SendRecord[];
}

/** Where the journal log has been applied up to (file 0: nothing yet). */
export function logPosition(db: SqliteDatabase): LogPosition {
  return db.prepare('SELECT file, offset FROM journal_log_position WHERE id = 1').get() as LogPosition;
}

/**
 * The transaction that applies frames of the journal log, in order, and records the
 * position they end at (or `moveTo`, a new file's start). Frames at or before the recorded
 * position are skipped: another process (bin/slipway submissions) may have applied them.
 */
export function journalWrites(
  db: SqliteDatabase,
): (frames: readonly { batch: WriteBatch; end: LogPosition }[], moveTo?: LogPosition) => void {
  const insertSubmissions = multiRowInsert(
    db,
    'INSERT INTO submissions (seq, kind, key_id, anti_mev, bundle_id, routes, created_at, updated_at)',
    8,
  );
  const insertTransactions = multiRowInsert(
    db,
    'INSERT INTO submission_transactions (seq, position, signature, wire, state, reason_code, reason)',
    7,
  );
  const updateTransaction = db.prepare(
    // A reason given (null clears it: a held transaction released) replaces code and words; absent keeps both.
    `UPDATE submission_transactions SET state = ?, slot = COALESCE(?, slot),
       reason_code = CASE WHEN ? THEN ? ELSE reason_code END, reason = CASE WHEN ? THEN ? ELSE reason END,
       error = COALESCE(?, error), landed_at = COALESCE(?, landed_at), slots_to_land = COALESCE(?, slots_to_land)
     WHERE seq = ? AND position = ?`,
  );
  const touchSubmission = db.prepare('UPDATE submissions SET updated_at = ? WHERE seq = ?');
  const addAttempt = db.prepare('UPDATE submission_transactions SET attempts = attempts + 1 WHERE seq = ? AND position = ?');
  const setPosition = db.prepare('UPDATE journal_log_position SET file = ?, offset = ? WHERE id = 1');
  const insertSend = db.prepare('INSERT INTO protected_sends (seq, position, evidence) VALUES (?, ?, ?)');
  const write = ({ now, records, changes, attempts, sends }: WriteBatch) => {
    if (records.length > 0) {
      const submissions: unknown[] = [];
      const transactions: unknown[] = [];
      for (const { seq, submission } of records) {
        submissions.push(
          seq,
          submission.kind,
          submission.keyId,
          submission.antiMev ? 1 : 0,
          submission.bundleId,
          submission.routes.join(','),
          now,
          now,
        );
        submission.transactions.forEach((tx, position) =>
          transactions.push(seq, position, tx.signature, tx.wire, tx.state, tx.reasonCode ?? null, tx.reason ?? null),
        );
      }
      insertSubmissions(submissions);
      insertTransactions(transactions);
    }
    const touched = new Set<number>();
    for (const change of changes) {
      const error = change.error === undefined ? null : JSON.stringify(change.error);
      const given = change.reason === undefined ? 0 : 1;
      updateTransaction.run(
        change.state,
        change.slot ?? null,
        given,
        change.reasonCode ?? null,
        given,
        change.reason ?? null,
        error,
        change.landedAt ?? null,
        change.slotsToLand ?? null,
        change.seq,
        change.position,
      );
      touched.add(change.seq);
    }
    for (const seq of touched) touchSubmission.run(now, seq);
    for (const item of attempts) addAttempt.run(item.seq, item.position);
    for (const item of sends) insertSend.run(item.seq, item.position, JSON.stringify(item.send));
  };
  return db.transaction((frames: readonly { batch: WriteBatch; end: LogPosition }[], moveTo?: LogPosition) => {
    const applied = logPosition(db);
    let position = applied;
    for (const frame of frames) {
      if (comparePositions(frame.end, position) <= 0) continue;
      write(frame.batch);
      position = frame.end;
    }
    if (moveTo !== undefined && comparePositions(moveTo, position) > 0) position = moveTo;
    if (position !== applied) setPosition.run(position.file, position.offset);
  });
}
