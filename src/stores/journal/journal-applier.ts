/**
 * Applies the journal log to SQLite from a thread of its own, and keeps SQLite's WAL
 * bounded. The request thread only appends to the log (journal-log.ts); this thread follows
 * the files itself (no message per write: it reads what the request thread wrote), applies
 * the frames in transactions of up to APPLY_MAX_FRAMES every APPLY_INTERVAL_MS, and at once
 * when the request thread asks before a read. Applying in the request thread cost it about
 * 5 % of its time at full load (SQLite's per-row inserts).
 *
 * Being SQLite's only regular writer, it also checkpoints: PASSIVE about once a second
 * (it never waits for readers), and RESTART once the WAL holds more than `restartBytes`
 * (PASSIVE alone never restarts the WAL under continuous writes: measured 723 MB after
 * 40 s at full load). RESTART fails fast while a reader holds a snapshot and is tried again
 * next round; `journal_size_limit` cuts the file back to that size.
 */
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { journalApplyFailuresTotal, walRestartsTotal } from '../../metrics/metrics';
import { comparePositions, LogTail, type LogPosition } from './journal-log';
import { decodeBatch } from './journal-log-codec';
import { journalWrites, logPosition, MIGRATIONS, type WriteBatch } from './journal-sqlite-schema';
import { openSqlite } from '../database/sqlite-database';

export const APPLY_INTERVAL_MS = 100;
/** Frames per SQLite transaction: bounds how long the write lock is held at once. */
export const APPLY_MAX_FRAMES = 256;
export const WAL_RESTART_BYTES = 64 * 1024 * 1024;
const CHECKPOINT_INTERVAL_MS = 1_000;

type ToApplier = { catchUp: number; upTo: LogPosition } | 'close';
type FromApplier = { caughtUp: number } | { failed: number; message: string } | 'applyFailed' | 'restarted' | 'closed';

/** Decodes log frames and applies them with `apply` (journalWrites) in transactions of APPLY_MAX_FRAMES. */
export function applyLogFrames(
  apply: (frames: { batch: WriteBatch; end: LogPosition }[]) => void,
  frames: Iterable<{ payload: Buffer; end: LogPosition }>,
): void {
  let group: { batch: WriteBatch; end: LogPosition }[] = [];
  for (const frame of frames) {
    group.push({ batch: decodeBatch(frame.payload), end: frame.end });
    if (group.length === APPLY_MAX_FRAMES) {
      apply(group);
      group = [];
    }
  }
  if (group.length > 0) apply(group);
}

const reached = (a: LogPosition, b: LogPosition) => comparePositions(a, b) >= 0;

if (!isMainThread && parentPort !== null && workerData?.journalApplier === true) {
  const port = parentPort;
  const { file, synchronous, restartBytes } = workerData as { file: string; synchronous: 'NORMAL' | 'FULL'; restartBytes: number };
  const db = openSqlite(file, MIGRATIONS, { synchronous, autoCheckpoint: false, walSizeLimit: restartBytes });
  const applyHere = journalWrites(db);
  const tail = new LogTail(file, logPosition(db));
  const frameBytes = (db.pragma('page_size', { simple: true }) as number) + 24;
  let lastCheckpoint = Date.now();

  /** Applies every whole frame written so far; throws if SQLite refuses. */
  const applyAll = () => {
    for (;;) {
      const frames = tail.read();
      if (frames.length === 0) break;
      applyLogFrames(applyHere, frames);
    }
    // Followed into a new file with nothing in it yet: SQLite records that it is there, and
    // the files before it, all applied, are needed no more.
    if (!reached(logPosition(db), tail.position)) applyHere([], tail.position);
    tail.deleteApplied();
  };
  // Frames read but refused by SQLite are read again: the tail goes back to SQLite's position.
  const rewind = () => {
    tail.close();
    tail.position = logPosition(db);
  };

  const checkpoint = () => {
    lastCheckpoint = Date.now();
    try {
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      if ((result?.log ?? 0) * frameBytes <= restartBytes) return;
      db.pragma('busy_timeout = 0');
      try {
        const [restart] = db.pragma('wal_checkpoint(RESTART)') as { busy: number }[];
        if (restart?.busy === 0) port.postMessage('restarted' satisfies FromApplier);
      } finally {
        db.pragma('busy_timeout = 5000');
      }
    } catch {
      // Busy: the next round tries again.
    }
  };

  const timer = setInterval(() => {
    try {
      applyAll();
    } catch {
      rewind();
      port.postMessage('applyFailed' satisfies FromApplier);
    }
    if (Date.now() - lastCheckpoint >= CHECKPOINT_INTERVAL_MS) checkpoint();
  }, APPLY_INTERVAL_MS);

  port.on('message', (message: ToApplier) => {
    if (message === 'close') {
      clearInterval(timer);
      try {
        applyAll();
      } catch {
        // Left in the log: the next start applies it.
      }
      tail.close();
      db.close();
      port.postMessage('closed' satisfies FromApplier);
      return;
    }
    try {
      applyAll();
      // The request thread wrote up to `upTo` before asking: once applied, answer.
      if (!reached(logPosition(db), message.upTo)) throw new Error('the journal log ends before what was written to it');
      port.postMessage({ caughtUp: message.catchUp } satisfies FromApplier);
    } catch (error) {
      rewind();
      port.postMessage({ failed: message.catchUp, message: error instanceof Error ? error.message : String(error) } satisfies FromApplier);
    }
  });
}

export interface JournalApplier {
  /** Resolves once SQLite holds everything written to the log up to `upTo`. */
  catchUp(upTo: LogPosition): Promise<void>;
  close(): Promise<void>;
}

export function startJournalApplier(file: string, synchronous: 'NORMAL' | 'FULL', restartBytes = WAL_RESTART_BYTES): JournalApplier {
  const worker = new Worker(path.join(__dirname, 'journal-applier.js'), {
    workerData: { journalApplier: true, file, synchronous, restartBytes },
  });
  worker.unref();
  let nextId = 0;
  const waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let closed = () => {};
  /** Once closing, the thread stays referenced until it has said 'closed'. */
  let closing = false;
  // A dead applier takes nothing with it (the log holds every write, and the next start
  // applies it), but reads can no longer be brought up to date: they fail, and say why.
  let dead: Error | undefined;
  const die = (error: Error) => {
    dead = new Error(`the journal's applier thread stopped (${error.message}); restart Slipway to apply the journal log`);
    for (const waiter of waiting.values()) waiter.reject(dead);
    waiting.clear();
    closed();
  };
  worker.on('error', die);
  worker.on('exit', () => die(new Error('it exited')));
  worker.on('message', (message: FromApplier) => {
    if (message === 'closed') return closed();
    if (message === 'restarted') return void walRestartsTotal.inc();
    if (message === 'applyFailed') return void journalApplyFailuresTotal.inc();
    if ('caughtUp' in message) {
      waiting.get(message.caughtUp)?.resolve();
      waiting.delete(message.caughtUp);
      return;
    }
    journalApplyFailuresTotal.inc();
    waiting.get(message.failed)?.reject(new Error(`the journal could not bring SQLite up to date: ${message.message}`));
    waiting.delete(message.failed);
  });
  return {
    catchUp(upTo) {
      if (dead !== undefined) return Promise.reject(dead);
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.ref(); // the process waits for the answer
        worker.postMessage({ catchUp: id, upTo } satisfies ToApplier);
      }).finally(() => {
        if (waiting.size === 0 && !closing) worker.unref();
      });
    },
    close: () =>
      dead !== undefined
        ? Promise.resolve()
        : new Promise((resolve) => {
            closing = true;
            worker.ref();
            closed = () => {
              closed = () => {};
              void worker.terminate().then(() => resolve());
            };
            worker.postMessage('close' satisfies ToApplier);
          }),
  };
}
