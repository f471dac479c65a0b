/** The submission journal in SQLite: one row per submission, one per transaction. */
import type { Migrations, SqliteOptions } from './sqlite-database';
import { openSqlite } from './sqlite-database';
import type { Journal, JournalEntry, JournalStatus, NewSubmission, SubmissionKind } from './journal';

const MIGRATIONS: Migrations = [
  `CREATE TABLE submissions (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL,
     key_id TEXT NOT NULL,
     anti_mev INTEGER NOT NULL,
     bundle_id TEXT,
     status TEXT NOT NULL,
     detail TEXT,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE submission_transactions (
     seq INTEGER NOT NULL REFERENCES submissions(seq),
     position INTEGER NOT NULL,
     signature TEXT NOT NULL,
     wire BLOB NOT NULL,
     dropped TEXT,
     PRIMARY KEY (seq, position)
   );
   CREATE INDEX submissions_created_at ON submissions(created_at);
   CREATE INDEX submission_transactions_signature ON submission_transactions(signature);`,
];

interface SubmissionRow {
  seq: number;
  kind: SubmissionKind;
  key_id: string;
  anti_mev: number;
  bundle_id: string | null;
  status: JournalStatus;
  created_at: number;
}

interface TransactionRow {
  seq: number;
  signature: string;
  wire: Buffer;
  dropped: string | null;
}

export function createSqliteJournal(file: string, options: SqliteOptions = {}): Journal {
  const db = openSqlite(file, MIGRATIONS, options);
  const insertSubmission = db.prepare(
    'INSERT INTO submissions (kind, key_id, anti_mev, bundle_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertTransaction = db.prepare('INSERT INTO submission_transactions (seq, position, signature, wire) VALUES (?, ?, ?, ?)');
  const updateStatus = db.prepare('UPDATE submissions SET status = ?, detail = ? WHERE seq = ?');
  const selectAfter = db.prepare('SELECT * FROM submissions WHERE seq > ? ORDER BY seq');
  const selectSince = db.prepare('SELECT * FROM submissions WHERE created_at >= ? ORDER BY seq');
  const markDropped = db.prepare('UPDATE submission_transactions SET dropped = ? WHERE seq = ? AND position = ?');
  const selectTransactions = db.prepare(
    'SELECT seq, signature, wire, dropped FROM submission_transactions WHERE seq BETWEEN ? AND ? ORDER BY seq, position',
  );

  const record = db.transaction((submission: NewSubmission): number => {
    const seq = Number(
      insertSubmission.run(submission.kind, submission.keyId, submission.antiMev ? 1 : 0, submission.bundleId, 'accepted', Date.now())
        .lastInsertRowid,
    );
    submission.transactions.forEach((tx, position) => insertTransaction.run(seq, position, tx.signature, tx.wire));
    return seq;
  });

  const hydrate = (rows: SubmissionRow[]): JournalEntry[] => {
    if (rows.length === 0) return [];
    const byseq = new Map<number, { signature: string; wire: Buffer; dropped: boolean }[]>();
    for (const tx of selectTransactions.all(rows[0]!.seq, rows[rows.length - 1]!.seq) as TransactionRow[]) {
      const list = byseq.get(tx.seq) ?? [];
      list.push({ signature: tx.signature, wire: tx.wire, dropped: tx.dropped !== null });
      byseq.set(tx.seq, list);
    }
    return rows.map((row) => ({
      seq: row.seq,
      kind: row.kind,
      keyId: row.key_id,
      antiMev: row.anti_mev === 1,
      bundleId: row.bundle_id,
      status: row.status,
      createdAt: row.created_at,
      transactions: byseq.get(row.seq) ?? [],
    }));
  };

  return {
    async record(submission) {
      return record(submission);
    },
    async setStatus(seq, status, detail) {
      updateStatus.run(status, detail ?? null, seq);
    },
    async markDropped(seq, position, reason) {
      markDropped.run(reason, seq, position);
    },
    async after(seq) {
      return hydrate(selectAfter.all(seq) as SubmissionRow[]);
    },
    async since(sinceMs) {
      return hydrate(selectSince.all(sinceMs) as SubmissionRow[]);
    },
    async close() {
      db.close();
    },
  };
}
