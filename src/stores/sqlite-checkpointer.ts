/**
 * Moves WAL checkpoints off the request thread. SQLite's automatic checkpoint runs inside
 * whichever commit crosses the threshold, copying the WAL into the database file there and
 * then: a stall of milliseconds on the hot path. Slipway turns it off for the journal and
 * checkpoints from this worker thread instead, on its own connection, PASSIVE (it never
 * blocks the writer; WAL lets both run at once).
 *
 * PASSIVE alone never restarts the WAL under continuous writes, though each round copies
 * every frame: the log only grew (measured: 723 MB after 40 s at full load). So once the
 * log holds more than `WAL_RESTART_BYTES`, the checkpointer asks the writer to pause, and
 * restarts the log (RESTART: about 2 ms, the passive rounds having copied the frames;
 * TRUNCATE took 35-45 ms, most of it syncing), then lets the writer go on; the file is
 * cut back to that size when the writer next resets it (`journal_size_limit`). The writer
 * holds its commits meanwhile instead of meeting SQLite's lock (whose busy handler would
 * sleep in steps of milliseconds on the request thread), and goes on by itself after
 * `PAUSE_LIMIT_MS` whatever happens here.
 */
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { walRestartsTotal } from '../metrics/metrics';

const INTERVAL_MS = 1_000;
export const WAL_RESTART_BYTES = 64 * 1024 * 1024;
/** The longest the writer holds its commits for a restart. */
export const PAUSE_LIMIT_MS = 100;

type ToCheckpointer = 'paused' | 'close';
type FromCheckpointer = 'pause' | 'restarted' | 'resume' | 'closed';

if (!isMainThread && parentPort !== null && workerData?.checkpointer === true) {
  const port = parentPort;
  const file = workerData.file as string;
  const restartBytes = workerData.restartBytes as number;
  const db = new Database(file);
  db.pragma('busy_timeout = 1000');
  const frameBytes = (db.pragma('page_size', { simple: true }) as number) + 24;
  let waitingForPause = false;
  const timer = setInterval(() => {
    if (waitingForPause) return;
    try {
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      if ((result?.log ?? 0) * frameBytes > restartBytes) {
        waitingForPause = true;
        port.postMessage('pause' satisfies FromCheckpointer);
      }
    } catch {
      // Busy or closing: the next round tries again.
    }
  }, INTERVAL_MS);
  port.on('message', (message: ToCheckpointer) => {
    if (message === 'paused') {
      // The writer waits: nothing should hold a lock, so fail fast rather than wait if a
      // reader (the CLI) does; the next round tries again.
      db.pragma('busy_timeout = 0');
      try {
        const [result] = db.pragma('wal_checkpoint(RESTART)') as { busy: number }[];
        if (result?.busy === 0) port.postMessage('restarted' satisfies FromCheckpointer);
      } catch {
        // Busy: tried again at the next round.
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
    if (message === 'restarted') return void walRestartsTotal.inc();
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
