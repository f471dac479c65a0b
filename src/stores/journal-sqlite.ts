/**
 * The submission journal in SQLite: one row per submission, one per transaction.
 *
 * Writes are group-committed: everything written in the same turn of the event loop shares
 * one SQLite transaction (one WAL append), and each call resolves only after that commit,
 * so nothing is answered before it is durable.
 */
import type { Migrations, SqliteOptions } from './sqlite-database';
import { openSqlite } from './sqlite-database';
import type { Journal, JournalEntry, JournalQuery, NewSubmission, StateChange, SubmissionKind, TransactionState } from './journal';

const MIGRATIONS: Migrations = [
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
   CREATE INDEX submission_transactions_signature ON submission_transactions(signature);
   CREATE INDEX submission_transactions_unfinished ON submission_transactions(seq)
     WHERE state = 'forwarded';`,
];

interface SubmissionRow {
  seq: number;
  kind: SubmissionKind;
  key_id: string;
  anti_mev: number;
  bundle_id: string | null;
  routes: string;
  created_at: number;
  updated_at: number;
}

interface TransactionRow {
  seq: number;
  position: number;
  signature: string;
  wire: Buffer;
  state: TransactionState;
  slot: number | null;
  reason: string | null;
  error: string | null;
  attempts: number;
}

const UNFINISHED: TransactionState[] = ['forwarded'];

export function createSqliteJournal(file: string, options: SqliteOptions = {}): Journal {
  const db = openSqlite(file, MIGRATIONS, options);
  const insertSubmission = db.prepare(
    'INSERT INTO submissions (kind, key_id, anti_mev, bundle_id, routes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertTransaction = db.prepare(
    'INSERT INTO submission_transactions (seq, position, signature, wire, state, reason) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const updateTransaction = db.prepare(
    'UPDATE submission_transactions SET state = ?, slot = COALESCE(?, slot), reason = COALESCE(?, reason), error = COALESCE(?, error) WHERE seq = ? AND position = ?',
  );
  const touchSubmission = db.prepare('UPDATE submissions SET updated_at = ? WHERE seq = ?');
  const addAttempt = db.prepare('UPDATE submission_transactions SET attempts = attempts + 1 WHERE seq = ? AND position = ?');
  const selectAfter = db.prepare('SELECT * FROM submissions WHERE seq > ? ORDER BY seq');
  const selectSince = db.prepare('SELECT * FROM submissions WHERE created_at >= ? ORDER BY seq');
  const selectUnfinished = db.prepare(
    `SELECT * FROM submissions WHERE seq IN (SELECT DISTINCT seq FROM submission_transactions WHERE state IN (${UNFINISHED.map(() => '?').join(', ')})) ORDER BY seq`,
  );
  const selectBySignature = db.prepare(
    'SELECT * FROM submissions WHERE seq IN (SELECT seq FROM submission_transactions WHERE signature = ?) OR bundle_id = ? ORDER BY seq DESC',
  );
  const selectTransactions = db.prepare('SELECT * FROM submission_transactions WHERE seq = ? ORDER BY position');
  const selectLastSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM submissions');

  const hydrate = (rows: SubmissionRow[]): JournalEntry[] =>
    rows.map((row) => ({
      seq: row.seq,
      kind: row.kind,
      keyId: row.key_id,
      antiMev: row.anti_mev === 1,
      bundleId: row.bundle_id,
      routes: row.routes === '' ? [] : row.routes.split(','),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      transactions: (selectTransactions.all(row.seq) as TransactionRow[]).map((tx) => ({
        position: tx.position,
        signature: tx.signature,
        wire: tx.wire,
        state: tx.state,
        slot: tx.slot,
        reason: tx.reason,
        error: tx.error === null ? null : (JSON.parse(tx.error) as unknown),
        attempts: tx.attempts,
      })),
    }));

  // Group commit: everything written in one event-loop turn (new submissions, state
  // changes, attempt counts) goes into one SQLite transaction, and each caller's promise
  // resolves after that commit.
  let records: NewSubmission[] = [];
  let changes: StateChange[] = [];
  let attempts: { seq: number; position: number }[] = [];
  let waiters: { resolve: (seqs: number[]) => void; reject: (error: unknown) => void; from: number; to: number }[] = [];
  let scheduled = false;

  const writeAll = db.transaction((batch: NewSubmission[], batchChanges: StateChange[], batchAttempts: typeof attempts): number[] => {
    const now = Date.now();
    const seqs = batch.map((submission) => {
      const seq = Number(
        insertSubmission.run(submission.kind, submission.keyId, submission.antiMev ? 1 : 0, submission.bundleId, submission.routes.join(','), now, now)
          .lastInsertRowid,
      );
      submission.transactions.forEach((tx, position) => insertTransaction.run(seq, position, tx.signature, tx.wire, tx.state, tx.reason ?? null));
      return seq;
    });
    const touched = new Set<number>();
    for (const change of batchChanges) {
      const error = change.error === undefined ? null : JSON.stringify(change.error);
      updateTransaction.run(change.state, change.slot ?? null, change.reason ?? null, error, change.seq, change.position);
      touched.add(change.seq);
    }
    for (const seq of touched) touchSubmission.run(now, seq);
    for (const item of batchAttempts) addAttempt.run(item.seq, item.position);
    return seqs;
  });

  const flush = () => {
    scheduled = false;
    const [batch, batchChanges, batchAttempts, batchWaiters] = [records, changes, attempts, waiters];
    records = [];
    changes = [];
    attempts = [];
    waiters = [];
    try {
      const seqs = writeAll(batch, batchChanges, batchAttempts);
      for (const waiter of batchWaiters) waiter.resolve(seqs.slice(waiter.from, waiter.to));
    } catch (error) {
      for (const waiter of batchWaiters) waiter.reject(error);
    }
  };

  /** Queues a write for this turn's commit; resolves with the sequence numbers of `submissions`. */
  const enqueue = (submissions: NewSubmission[], newChanges: readonly StateChange[], newAttempts: readonly { seq: number; position: number }[]) =>
    new Promise<number[]>((resolve, reject) => {
      const from = records.length;
      records.push(...submissions);
      changes.push(...newChanges);
      attempts.push(...newAttempts);
      waiters.push({ resolve, reject, from, to: records.length });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  return {
    async record(submission) {
      return (await enqueue([submission], [], []))[0]!;
    },
    async update(newChanges) {
      if (newChanges.length > 0) await enqueue([], newChanges, []);
    },
    async countAttempts(items) {
      if (items.length > 0) await enqueue([], [], items);
    },
    async after(seq) {
      return hydrate(selectAfter.all(seq) as SubmissionRow[]);
    },
    async since(sinceMs) {
      return hydrate(selectSince.all(sinceMs) as SubmissionRow[]);
    },
    async unfinished() {
      return hydrate(selectUnfinished.all(...UNFINISHED) as SubmissionRow[]);
    },
    async find(id) {
      return hydrate(selectBySignature.all(id, id) as SubmissionRow[]);
    },
    async list(query: JournalQuery) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (query.keyId !== undefined) {
        where.push('key_id = ?');
        args.push(query.keyId);
      }
      if (query.state !== undefined) {
        where.push('seq IN (SELECT seq FROM submission_transactions WHERE state = ?)');
        args.push(query.state);
      }
      const sql = `SELECT * FROM submissions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
      return hydrate(db.prepare(sql).all(...args, query.limit ?? 100) as SubmissionRow[]);
    },
    async lastSeq() {
      return (selectLastSeq.get() as { seq: number }).seq;
    },
    async close() {
      if (scheduled) flush();
      db.close();
    },
  };
}
