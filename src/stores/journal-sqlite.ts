/**
 * The submission journal in SQLite: one row per submission, one per transaction.
 *
 * Writes are group-committed: everything written in the same turn of the event loop is
 * one frame of the journal log (journal-log.ts), one append, and each call resolves only
 * after it, so nothing is answered before it is durable. A thread of its own applies the
 * frames to SQLite in bulk (journal-applier.ts), ten times a second and before any read;
 * after a crash, start-up applies what the log holds beyond the position SQLite recorded.
 */
import bs58 from 'bs58';
import { BatchEncoder } from './journal-log-codec';
import { FRAME_HEADER_BYTES, lastLogFile, openJournalLog, readLog } from './journal-log';
import { journalWrites, logPosition, MIGRATIONS, type WriteBatch } from './journal-sqlite-schema';
import { openSignatureIndex, packIndexPairs, signatureIndexFile, startSignatureIndexWriter } from './signature-index-sqlite';
import type { SqliteOptions } from './sqlite-database';
import { applyLogFrames, startJournalApplier, WAL_RESTART_BYTES } from './journal-applier';
import { openSqlite } from './sqlite-database';
import { decodeSqliteError, entryFromRows, type SubmissionRow, type TransactionRow } from './journal-rows';
import type { Journal, JournalEntry, JournalQuery, NewSubmission, SendEvidence, SendRecord, StateChange } from './journal';

const INDEX_INTERVAL_MS = 200;
/** A log file past this size is followed by a new one (the applier deletes it once applied). */
const LOG_ROTATE_BYTES = 16 * 1024 * 1024;

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

export interface SqliteJournalOptions extends SqliteOptions {
  /** The WAL size past which the applier thread restarts it (tests make it small). */
  readonly walRestartBytes?: number;
  /**
   * Opens the journal as a reader, beside a server that may be writing it (`bin/slipway
   * submissions`): it takes no writes, and before each read applies what the log holds
   * beyond SQLite, so that it sees every write, after a crash too.
   */
  readonly reader?: boolean;
  /** The log file size past which a new file is started (tests make it small). */
  readonly logRotateBytes?: number;
}

export function createSqliteJournal(file: string, options: SqliteJournalOptions = {}): Journal {
  const reader = options.reader === true;
  // A writer's WAL is checkpointed by its applier thread; a reader's by SQLite, as usual.
  const db = openSqlite(file, MIGRATIONS, {
    ...options,
    autoCheckpoint: reader,
    walSizeLimit: reader ? undefined : (options.walRestartBytes ?? WAL_RESTART_BYTES),
  });
  const selectAfter = db.prepare('SELECT * FROM submissions WHERE seq > ? ORDER BY seq');
  const selectFrom = db.prepare('SELECT * FROM submissions WHERE seq >= ? ORDER BY seq');
  const selectCreatedAt = db.prepare('SELECT seq, created_at FROM submissions WHERE seq >= ? ORDER BY seq LIMIT 1');
  // The states as literals, as in the partial index's condition, so that SQLite uses the index.
  const selectUnfinished = db.prepare(
    "SELECT * FROM submissions WHERE seq IN (SELECT DISTINCT seq FROM submission_transactions WHERE state IN ('forwarded', 'held')) ORDER BY seq",
  );
  const selectSends = db.prepare('SELECT position, evidence FROM protected_sends WHERE seq = ? ORDER BY rowid');
  const selectByBundle = db.prepare('SELECT seq FROM submissions WHERE bundle_id = ?');
  const selectSubmission = db.prepare('SELECT * FROM submissions WHERE seq = ?');
  const selectUnindexed = db.prepare('SELECT seq, wire FROM submission_transactions WHERE seq > ? ORDER BY seq, position');
  const selectTransactions = db.prepare('SELECT * FROM submission_transactions WHERE seq = ? ORDER BY position');
  const selectLastSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM submissions');

  /**
   * The first sequence number created at or after `sinceMs`, by binary search: sequence
   * numbers grow with time (a clock stepping back can only make the search start early,
   * and the caller filters on created_at). Gaps in the numbers are stepped over by the
   * `seq >= ?` look-up.
   */
  const firstCreatedSince = (sinceMs: number): number => {
    let low = 1;
    let high = (selectLastSeq.get() as { seq: number }).seq + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const row = selectCreatedAt.get(middle) as { seq: number; created_at: number } | undefined;
      if (row === undefined || row.created_at >= sinceMs) high = middle;
      else low = row.seq + 1;
    }
    return low;
  };

  /** A protected submission's sends, by transaction position. */
  const sendsOf = (row: SubmissionRow): Map<number, SendEvidence[]> => {
    const byPosition = new Map<number, SendEvidence[]>();
    if (row.anti_mev !== 1) return byPosition;
    for (const send of selectSends.all(row.seq) as { position: number; evidence: string }[]) {
      const list = byPosition.get(send.position) ?? [];
      list.push(JSON.parse(send.evidence) as SendEvidence);
      byPosition.set(send.position, list);
    }
    return byPosition;
  };

  const hydrate = (rows: SubmissionRow[]): JournalEntry[] =>
    rows.map((row) => {
      const sends = sendsOf(row);
      return entryFromRows(
        row,
        selectTransactions.all(row.seq) as TransactionRow[],
        (position) => sends.get(position) ?? [],
        decodeSqliteError,
      );
    });

  // Group commit: everything written in one event-loop turn (new submissions, state
  // changes, attempt counts) is one frame of the journal log, appended in one write, and
  // each caller's promise resolves after it. The applier thread (journal-applier.ts)
  // follows the log into SQLite, and every read first asks it to catch up with what was
  // written, so that reads see every write. The append stays in this thread: handing the
  // writes themselves to another thread was measured to cost this thread as much as the
  // commit did (structured clone, and waking the other thread).
  const applyHere = journalWrites(db);
  const indexWriter = startSignatureIndexWriter(signatureIndexFile(file));

  // Frames in the log beyond what SQLite holds (a crash; or, for a reader, what the
  // server has not applied yet) are applied first, holding SQLite's write lock throughout.
  const catchUp = () => db.transaction(() => applyLogFrames(applyHere, readLog(file, logPosition(db)))).immediate();
  catchUp();
  const synchronous = options.synchronous ?? 'NORMAL';
  const log = reader ? undefined : openJournalLog(file, lastLogFile(file) + 1, synchronous);
  if (log !== undefined) {
    applyHere([], log.position);
    log.deleteBefore(log.position.file);
  }
  const applier = log === undefined ? undefined : startJournalApplier(file, synchronous, options.walRestartBytes);
  const encoder = new BatchEncoder();

  let nextSeq = (selectLastSeq.get() as { seq: number }).seq + 1;
  let records: { seq: number; submission: NewSubmission }[] = [];
  let changes: StateChange[] = [];
  let attempts: { seq: number; position: number }[] = [];
  let sends: SendRecord[] = [];
  let waiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  let scheduled = false;

  /** Brings SQLite up to date with every write answered so far, before a read. */
  const settle = async () => {
    if (applier === undefined) return catchUp();
    await applier.catchUp(log!.position);
  };

  const flush = () => {
    scheduled = false;
    const batch: WriteBatch = { now: Date.now(), records, changes, attempts, sends };
    const batchWaiters = waiters;
    records = [];
    changes = [];
    attempts = [];
    sends = [];
    waiters = [];
    try {
      if (log === undefined) throw new Error('this journal was opened as a reader: it does not take writes');
      log.append(encoder.encode(batch, FRAME_HEADER_BYTES));
    } catch (error) {
      for (const waiter of batchWaiters) waiter.reject(error);
      return;
    }
    for (const { seq, submission } of batch.records) noteForIndex(seq, submission);
    for (const waiter of batchWaiters) waiter.resolve();
    if (log.position.offset >= (options.logRotateBytes ?? LOG_ROTATE_BYTES)) {
      try {
        log.rotate();
      } catch {
        // The writes are safe in this file, which simply grows: tried again after the next group.
      }
    }
  };

  // The signature index is written in bulk, sorted, by its own thread every 200 ms: one
  // random B-tree insert per transaction on the hot path would cost more than the rest of
  // the journal write. Until the index has them, new entries are found in `unindexed`.
  let unindexed: { prefix: bigint; seq: number; signature: string }[] = [];
  const unindexedBySignature = new Map<string, number[]>();
  const forget = (entries: typeof unindexed) => {
    for (const entry of entries) {
      const seqs = unindexedBySignature.get(entry.signature)?.filter((seq) => seq !== entry.seq) ?? [];
      if (seqs.length === 0) unindexedBySignature.delete(entry.signature);
      else unindexedBySignature.set(entry.signature, seqs);
    }
  };
  const flushIndex = async () => {
    if (unindexed.length === 0) return;
    const entries = unindexed;
    unindexed = [];
    try {
      await indexWriter.add(packIndexPairs(entries));
    } catch {
      // Still found through `unindexedBySignature`; tried again with the next batch (and
      // start-up indexes whatever the journal holds beyond the index).
      unindexed = entries.concat(unindexed);
      return;
    }
    forget(entries);
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
  const index = openSignatureIndex(signatureIndexFile(file));
  const missing = selectUnindexed.all(index.indexedUpTo()) as { seq: number; wire: Buffer }[];
  index.add(packIndexPairs(missing.map((row) => ({ prefix: signaturePrefix(row.wire), seq: row.seq }))));
  const indexTimer = setInterval(() => void flushIndex(), INDEX_INTERVAL_MS);
  indexTimer.unref();

  /** Queues a write for this turn's commit. */
  const enqueue = (
    newRecords: { seq: number; submission: NewSubmission }[],
    newChanges: readonly StateChange[],
    newAttempts: readonly { seq: number; position: number }[],
    newSends: readonly SendRecord[] = [],
  ) =>
    new Promise<void>((resolve, reject) => {
      records.push(...newRecords);
      changes.push(...newChanges);
      attempts.push(...newAttempts);
      sends.push(...newSends);
      waiters.push({ resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  return {
    async record(submission) {
      const seq = nextSeq++;
      const firstSends: SendRecord[] = [];
      submission.transactions.forEach((tx, position) => {
        if (tx.send !== undefined) firstSends.push({ seq, position, send: tx.send });
      });
      await enqueue([{ seq, submission }], [], [], firstSends);
      return seq;
    },
    async recordSends(items) {
      if (items.length > 0) await enqueue([], [], [], items);
    },
    async update(newChanges) {
      if (newChanges.length > 0) await enqueue([], newChanges, []);
    },
    async countAttempts(items) {
      if (items.length > 0) await enqueue([], [], items);
    },
    async after(seq) {
      await settle();
      return hydrate(selectAfter.all(seq) as SubmissionRow[]);
    },
    async since(sinceMs) {
      await settle();
      return hydrate((selectFrom.all(firstCreatedSince(sinceMs)) as SubmissionRow[]).filter((row) => row.created_at >= sinceMs));
    },
    async unfinished() {
      await settle();
      return hydrate(selectUnfinished.all() as SubmissionRow[]);
    },
    async find(id) {
      await settle();
      const seqs = new Set<number>(unindexedBySignature.get(id) ?? []);
      const prefix = prefixOfSignature(id);
      if (prefix !== undefined) for (const seq of index.lookup(prefix)) seqs.add(seq);
      for (const row of selectByBundle.all(id) as { seq: number }[]) seqs.add(row.seq);
      const rows = [...seqs].sort((a, b) => b - a).map((seq) => selectSubmission.get(seq) as SubmissionRow);
      // A prefix can be shared: keep the entries that really hold this signature or bundle ID.
      return hydrate(rows).filter((entry) => entry.bundleId === id || entry.transactions.some((tx) => tx.signature === id));
    },
    async list(query: JournalQuery) {
      await settle();
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
      await settle();
      return (selectLastSeq.get() as { seq: number }).seq;
    },
    async close() {
      clearInterval(indexTimer);
      if (waiters.length > 0) flush();
      await settle().catch(() => {}); // what is not applied is in the log, for the next start
      await applier?.close();
      log?.close();
      await flushIndex();
      await indexWriter.close();
      index.close();
      db.close();
    },
  };
}
