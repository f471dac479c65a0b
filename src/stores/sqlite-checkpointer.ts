/**
 * Moves WAL checkpoints off the request thread. SQLite's automatic checkpoint runs inside
 * whichever commit crosses the threshold, copying the WAL into the database file there and
 * then: a stall of milliseconds on the hot path. Slipway turns it off for the journal and
 * checkpoints from this worker thread instead, on its own connection, PASSIVE (it never
 * blocks the writer; WAL lets both run at once).
 *
 * PASSIVE alone never lets the WAL file shrink under continuous writes: the file restarts
 * only when a checkpoint has copied every frame and a writer then begins, and a writer that
 * never pauses always leaves a few frames behind (measured: 723 MB after 40 s at full
 * load). So once the file passes `WAL_RESTART_BYTES`, the checkpointer asks the writer to
 * pause, copies the last frames and truncates the file (TRUNCATE, a few milliseconds: the
 * passive rounds have copied the rest), then lets the writer go on. The writer holds its
 * commits meanwhile instead of meeting SQLite's lock (whose busy handler would sleep in
 * steps of milliseconds on the request thread), and goes on by itself after
 * `PAUSE_LIMIT_MS` whatever happens here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { walTruncationsTotal } from '../metrics/metrics';

const INTERVAL_MS = 1_000;
export const WAL_RESTART_BYTES = 64 * 1024 * 1024;
/** The longest the writer holds its commits for a truncation. */
export const PAUSE_LIMIT_MS = 100;

type ToCheckpointer = 'paused' | 'close';
type FromCheckpointer = 'pause' | 'truncated' | 'resume' | 'closed';

if (!isMainThread && parentPort !== null && workerData?.checkpointer === true) {
  const port = parentPort;
  const file = workerData.file as string;
  const restartBytes = workerData.restartBytes as number;
  const db = new Database(file);
  db.pragma('busy_timeout = 1000');
  let waitingForPause = false;
  const timer = setInterval(() => {
    if (waitingForPause) return;
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
      if ((fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > restartBytes) {
        waitingForPause = true;
        port.postMessage('pause' satisfies FromCheckpointer);
      }
    } catch {
      // Busy or closing: the next round tries again.
    }
  }, INTERVAL_MS);
  port.on('message', (message: ToCheckpointer) => {
    if (message === 'paused') {
      // The writer waits: nothing should hold the lock, so fail fast rather than wait if a
      // reader (the CLI) does; the next round tries again.
      db.pragma('busy_timeout = 0');
      try {
        const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
        if (result?.busy === 0) port.postMessage('truncated' satisfies FromCheckpointer);
      } catch {
        // Busy: tried again once the file has grown past the mark again.
      }
      db.pragma('busy_timeout = 1000');
      waitingForPause = false;
      port.postMessage('resume' satisfies FromCheckpointer);
      return;
    }
    clearInterval(timer);
    db.close();
    port.postMessage('closed' satisfies FromCheckpointer);
  });
}

export interface Checkpointer {
  close(): Promise<void>;
}

/**
 * Starts checkpointing `file` from a worker thread. `writer.hold()` is called in the
 * writer's thread between two commits, and must keep it from committing until `release()`.
 */
export function startCheckpointer(file: string, writer: { hold(): void; release(): void }, restartBytes = WAL_RESTART_BYTES): Checkpointer {
  const worker = new Worker(path.join(__dirname, 'sqlite-checkpointer.js'), { workerData: { checkpointer: true, file, restartBytes } });
  worker.unref();
  let closed = () => {};
  let limit: NodeJS.Timeout | undefined;
  const release = () => {
    if (limit === undefined) return;
    clearTimeout(limit);
    limit = undefined;
    writer.release();
  };
  // A checkpointer that fails must not leave the writer held, nor take the process down:
  // the WAL then grows until the next start, which checkpoints it.
  worker.on('error', () => {
    release();
    closed();
  });
  worker.on('message', (message: FromCheckpointer) => {
    if (message === 'closed') return closed();
    if (message === 'resume') return release();
    if (message === 'truncated') return void walTruncationsTotal.inc();
    writer.hold();
    limit = setTimeout(release, PAUSE_LIMIT_MS);
    worker.postMessage('paused' satisfies ToCheckpointer);
  });
  return {
    close: () =>
      new Promise((resolve) => {
        release();
        closed = () => void worker.terminate().then(() => resolve());
        worker.postMessage('close' satisfies ToCheckpointer);
      }),
  };
}
