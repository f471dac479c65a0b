/**
 * The submission journal in SQLite: one row per submission, one per transaction.
 *
 * Writes are group-committed: everything written in the same turn of the event loop shares
 * one SQLite transaction (one WAL append), and each call resolves only after that commit,
 * so nothing is answered before it is durable.
 */
import bs58 from 'bs58';
import type { Migrations, SqliteOptions } from './sqlite-database';
import { startCheckpointer } from './sqlite-checkpointer';
import { openSignatureIndex, signatureIndexFile } from './signature-index-sqlite';
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
];

const INDEX_INTERVAL_MS = 200;

/** The first 8 bytes of a transaction's first signature (after its count byte), as an integer key. */
function signaturePrefix(wire: Buffer): bigint {
  return wire.readBigInt64LE(1);
}

function prefixOfSignature(signature: string): bigint | undefined {
  try {
    const bytes = Buffer.from(bs58.decode(signature));
    return bytes.length === 64 ? bytes.readBigInt64LE(0) : undefined;
  } catch {
    return undefined;
  }
}

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

export function createSqliteJournal(file: string, options: SqliteOptions & { checkpointInBackground?: boolean } = {}): Journal {
  const background = options.checkpointInBackground === true;
  const db = openSqlite(file, MIGRATIONS, { ...options, autoCheckpoint: !background });
  const checkpointer = background ? startCheckpointer(file) : undefined;
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
  const selectFrom = db.prepare('SELECT * FROM submissions WHERE seq >= ? ORDER BY seq');
  const selectCreatedAt = db.prepare('SELECT seq, created_at FROM submissions WHERE seq >= ? ORDER BY seq LIMIT 1');
  const selectFirstSeq = db.prepare('SELECT COALESCE(MIN(seq), 1) AS seq FROM submissions');
  const selectUnfinished = db.prepare(
    `SELECT * FROM submissions WHERE seq IN (SELECT DISTINCT seq FROM submission_transactions WHERE state IN (${UNFINISHED.map(() => '?').join(', ')})) ORDER BY seq`,
  );
  const selectByBundle = db.prepare('SELECT seq FROM submissions WHERE bundle_id = ?');
  const selectSubmission = db.prepare('SELECT * FROM submissions WHERE seq = ?');
  const selectUnindexed = db.prepare('SELECT seq, wire FROM submission_transactions WHERE seq > ? ORDER BY seq, position');
  const selectTransactions = db.prepare('SELECT * FROM submission_transactions WHERE seq = ? ORDER BY position');
  const selectLastSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM submissions');

  /**
   * The first sequence number created at or after `sinceMs`, by binary search: sequence
   * numbers grow with time (a clock stepping back can only make the search start early,
   * and the caller filters on created_at).
   */
  const firstCreatedSince = (sinceMs: number): number => {
    let low = (selectFirstSeq.get() as { seq: number }).seq;
    let high = (selectLastSeq.get() as { seq: number }).seq + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const row = selectCreatedAt.get(middle) as { seq: number; created_at: number } | undefined;
      if (row === undefined || row.created_at >= sinceMs) high = middle;
      else low = row.seq + 1;
    }
    return low;
  };

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
      noteForIndex(seq, submission);
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

  // The signature index is written in bulk, sorted, by its own thread every 200 ms: one
  // random B-tree insert per transaction on the hot path would cost more than the rest of
  // the journal write. Until the index has them, new entries are found in `unindexed`.
  const index = openSignatureIndex(signatureIndexFile(file));
  let unindexed: { prefix: bigint; seq: number; signature: string }[] = [];
  const unindexedBySignature = new Map<string, number[]>();
  const forget = (entries: typeof unindexed) => {
    for (const entry of entries) {
      const seqs = unindexedBySignature.get(entry.signature)?.filter((seq) => seq !== entry.seq) ?? [];
      if (seqs.length === 0) unindexedBySignature.delete(entry.signature);
      else unindexedBySignature.set(entry.signature, seqs);
    }
  };
  const pack = (entries: readonly { prefix: bigint; seq: number }[]) => {
    const pairs = new BigInt64Array(entries.length * 2);
    entries.forEach((entry, i) => {
      pairs[2 * i] = entry.prefix;
      pairs[2 * i + 1] = BigInt(entry.seq);
    });
    return pairs;
  };
  let indexing = 0; // batches handed to the index thread and not yet written
  let indexed = () => {};
  const flushIndex = () => {
    if (unindexed.length === 0) return;
    const entries = unindexed;
    unindexed = [];
    indexing += 1;
    index.add(pack(entries), () => {
      forget(entries);
      indexing -= 1;
      if (indexing === 0) indexed();
    });
  };
  const noteForIndex = (seq: number, submission: NewSubmission) => {
    for (const tx of submission.transactions) {
      unindexed.push({ prefix: signaturePrefix(tx.wire), seq, signature: tx.signature });
      const seqs = unindexedBySignature.get(tx.signature);
      if (seqs === undefined) unindexedBySignature.set(tx.signature, [seq]);
      else seqs.push(seq);
    }
  };
  // After a crash the index may lag the journal: catch up before serving.
  const missing = selectUnindexed.all(index.indexedUpTo()) as { seq: number; wire: Buffer }[];
  index.addNow(pack(missing.map((row) => ({ prefix: signaturePrefix(row.wire), seq: row.seq }))));
  const indexTimer = setInterval(flushIndex, INDEX_INTERVAL_MS);
  indexTimer.unref();

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
      return hydrate((selectFrom.all(firstCreatedSince(sinceMs)) as SubmissionRow[]).filter((row) => row.created_at >= sinceMs));
    },
    async unfinished() {
      return hydrate(selectUnfinished.all(...UNFINISHED) as SubmissionRow[]);
    },
    async find(id) {
      const seqs = new Set<number>(unindexedBySignature.get(id) ?? []);
      const prefix = prefixOfSignature(id);
      if (prefix !== undefined) for (const seq of index.lookup(prefix)) seqs.add(seq);
      for (const row of selectByBundle.all(id) as { seq: number }[]) seqs.add(row.seq);
      const rows = [...seqs].sort((a, b) => b - a).map((seq) => selectSubmission.get(seq) as SubmissionRow);
      // A prefix can be shared: keep the entries that really hold this signature or bundle ID.
      return hydrate(rows).filter((entry) => entry.bundleId === id || entry.transactions.some((tx) => tx.signature === id));
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
      clearInterval(indexTimer);
      if (scheduled) flush();
      flushIndex();
      if (indexing > 0) await new Promise<void>((resolve) => (indexed = resolve));
      await index.close();
      await checkpointer?.close();
      db.close();
    },
  };
}
