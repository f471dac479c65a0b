/**
 * The SQLite journal's group commit: everything written in one event-loop turn (new
 * submissions, state changes, attempt counts, sends) is one frame of the journal log
 * (journal-log.ts), appended in one write, and each caller's promise resolves after it, so
 * nothing is answered before it is durable. The applier thread (journal-applier.ts) follows
 * the log into SQLite. The append stays in the request thread: handing the writes themselves
 * to another thread was measured to cost this thread as much as the commit did (structured
 * clone, and waking the other thread).
 */
import type { Journal, NewSubmission, SendRecord, StateChange } from './journal';
import { firstSends, type Waiter } from './journal-groups';
import { BatchEncoder } from './journal-log-codec';
import { FRAME_HEADER_BYTES, type JournalLog } from './journal-log';
import type { WriteBatch } from './journal-sqlite-schema';

export interface SqliteWrites extends Pick<Journal, 'record' | 'update' | 'recordSends' | 'countAttempts'> {
  /** Appends what this turn has queued, if anything, without waiting for the turn to end (closing). */
  flushQueued(): void;
}

export interface SqliteWritesOptions {
  /** Undefined for a reader, which takes no writes. */
  readonly log: JournalLog | undefined;
  /** The sequence number of the next submission: this thread gives them, the journal's only writer. */
  readonly firstSeq: number;
  /** The log file size past which a new file is started. */
  readonly logRotateBytes: number;
  /** Told of each submission once its frame is appended (the signature look-up). */
  readonly onAppended: (seq: number, submission: NewSubmission) => void;
}

export function createSqliteWrites({ log, firstSeq, logRotateBytes, onAppended }: SqliteWritesOptions): SqliteWrites {
  const encoder = new BatchEncoder();
  let nextSeq = firstSeq;
  let records: { seq: number; submission: NewSubmission }[] = [];
  let changes: StateChange[] = [];
  let attempts: { seq: number; position: number }[] = [];
  let sends: SendRecord[] = [];
  let waiters: Waiter[] = [];
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const batchRecords = records;
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
    for (const { seq, submission } of batchRecords) onAppended(seq, submission);
    for (const waiter of batchWaiters) waiter.resolve();
    if (log.position.offset >= logRotateBytes) {
      try {
        log.rotate();
      } catch {
        // The writes are safe in this file, which simply grows: tried again after the next group.
      }
    }
  };

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
      await enqueue([{ seq, submission }], [], [], firstSends(seq, submission));
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
    flushQueued() {
      if (waiters.length > 0) flush();
    },
  };
}
