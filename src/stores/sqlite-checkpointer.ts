/**
 * Moves WAL checkpoints off the request thread. SQLite's automatic checkpoint runs inside
 * whichever commit crosses the threshold, copying the WAL into the database file there and
 * then: a stall of milliseconds on the hot path. Slipway turns it off for the journal and
 * checkpoints from this worker thread instead, on its own connection, PASSIVE (it never
 * blocks the writer; WAL lets both run at once).
 */
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const INTERVAL_MS = 1_000;

if (!isMainThread && parentPort !== null) {
  const db = new Database(workerData.file as string);
  db.pragma('busy_timeout = 1000');
  const timer = setInterval(() => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or closing: the next round tries again.
    }
  }, INTERVAL_MS);
  parentPort.on('message', () => {
    clearInterval(timer);
    db.close();
    parentPort!.postMessage('closed');
  });
}

export interface Checkpointer {
  close(): Promise<void>;
}

/** Starts checkpointing `file` from a worker thread. */
export function startCheckpointer(file: string): Checkpointer {
  const worker = new Worker(path.join(__dirname, 'sqlite-checkpointer.js'), { workerData: { file } });
  worker.unref();
  return {
    close: () =>
      new Promise((resolve) => {
        worker.once('message', () => void worker.terminate().then(() => resolve()));
        worker.postMessage('close');
      }),
  };
}
