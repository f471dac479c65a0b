/**
 * The submission journal in SQLite: one row per submission, one per transaction.
 *
 * Writes are group-committed: everything written in the same turn of the event loop is
 * one frame of the journal log (journal-log.ts), one append, and each call resolves only
 * after it, so nothing is answered before it is durable. A thread of its own applies the
 * frames to SQLite in bulk (journal-applier.ts), ten times a second and before any read;
 * after a crash, start-up applies what the log holds beyond the position SQLite recorded.
 *
 * This file opens the pieces in that order and closes them in the reverse: the statements
 * (journal-sqlite-statements.ts), the group commit (journal-sqlite-writes.ts), the
 * signature look-up (journal-sqlite-signatures.ts) and the reads (journal-sqlite-reads.ts).
 */
import { lastLogFile, openJournalLog, readLog } from './journal-log';
import { journalWrites, logPosition, MIGRATIONS } from './journal-sqlite-schema';
import { signatureIndexFile, startSignatureIndexWriter } from './signature-index-sqlite';
import type { SqliteOptions } from '../database/sqlite-database';
import { applyLogFrames, startJournalApplier, WAL_RESTART_BYTES } from './journal-applier';
import { openSqlite } from '../database/sqlite-database';
import { lastSeqIn, prepareJournalStatements } from './journal-sqlite-statements';
import { createSqliteWrites } from './journal-sqlite-writes';
import { openJournalSignatures } from './journal-sqlite-signatures';
import { createSqliteReads } from './journal-sqlite-reads';
import { startReportQueries } from './sqlite-report-queries';
import type { Journal } from './journal';

/** A log file past this size is followed by a new one (the applier deletes it once applied). */
const LOG_ROTATE_BYTES = 16 * 1024 * 1024;

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
  const statements = prepareJournalStatements(db);

  // The applier thread (journal-applier.ts) follows the log into SQLite, and every read
  // first asks it to catch up with what was written, so that reads see every write.
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
  // The signature look-up opens below; each write reaches it only after this function returns.
  const writes = createSqliteWrites({
    log,
    firstSeq: lastSeqIn(statements) + 1,
    logRotateBytes: options.logRotateBytes ?? LOG_ROTATE_BYTES,
    onAppended: (seq, submission) => signatures.note(seq, submission),
  });

  /** Brings SQLite up to date with every write answered so far, before a read. */
  const settle = async () => {
    if (applier === undefined) return catchUp();
    await applier.catchUp(log!.position);
  };

  const signatures = openJournalSignatures(file, statements, indexWriter);
  const reportQueries = startReportQueries(file);
  const reads = createSqliteReads(db, statements, signatures, settle, reportQueries);

  return {
    record: writes.record,
    recordSends: writes.recordSends,
    update: writes.update,
    countAttempts: writes.countAttempts,
    after: reads.after,
    since: reads.since,
    unfinished: reads.unfinished,
    find: reads.find,
    list: reads.list,
    lastSeq: reads.lastSeq,
    landingGroups: reads.landingGroups,
    outcomes: reads.outcomes,
    async close() {
      signatures.stop();
      writes.flushQueued();
      await settle().catch(() => {}); // what is not applied is in the log, for the next start
      await applier?.close();
      await reportQueries.close();
      log?.close();
      await signatures.close();
      db.close();
    },
  };
}
