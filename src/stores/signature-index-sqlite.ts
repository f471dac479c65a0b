/**
 * The journal's signature index (the first 8 bytes of a signature → submission sequence
 * numbers), in a SQLite file of its own, written by a worker thread.
 *
 * Each entry is a random B-tree insert: about 4 KB of WAL and several microseconds apiece,
 * and a millisecond stall every time a few hundred are written together. None of that
 * belongs on the request thread, and in the journal's own database it would also hold the
 * journal's write lock. The index can be rebuilt from the journal at any time, so it needs
 * no durability of its own: after a crash, start-up indexes what the journal holds beyond
 * the index's highest sequence number (batches are written in sequence order, one
 * transaction each, so everything below that number is indexed).
 *
 * Reads go through a connection of the request thread: WAL lets them run beside the
 * worker's writes.
 */
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Migrations } from './sqlite-database';
import { openSqlite } from './sqlite-database';

const MIGRATIONS: Migrations = [
  `CREATE TABLE signature_index (prefix INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (prefix, seq)) WITHOUT ROWID;
   CREATE TABLE indexed_up_to (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
   INSERT INTO indexed_up_to VALUES (1, 0);`,
];

/** Entries as the worker receives them: pairs of (prefix, seq) in one BigInt64Array, in sequence order. */
type Batch = BigInt64Array;

if (!isMainThread && parentPort !== null && workerData?.signatureIndex === true) {
  const db = openSqlite(workerData.file as string, MIGRATIONS);
  const insert = db.prepare('INSERT OR IGNORE INTO signature_index (prefix, seq) VALUES (?, ?)');
  const advance = db.prepare('UPDATE indexed_up_to SET seq = MAX(seq, ?) WHERE id = 1');
  const write = db.transaction((pairs: Batch) => {
    // Sorted, neighbouring inserts share B-tree pages.
    const order = Array.from({ length: pairs.length / 2 }, (_, i) => i).sort((a, b) => (pairs[2 * a]! < pairs[2 * b]! ? -1 : 1));
    for (const i of order) insert.run(pairs[2 * i]!, pairs[2 * i + 1]!);
    advance.run(pairs[pairs.length - 1]!);
  });
  parentPort.on('message', (message: { id: number; pairs: Batch } | 'close') => {
    if (message === 'close') {
      db.close();
      parentPort!.postMessage('closed');
      return;
    }
    write(message.pairs);
    parentPort!.postMessage(message.id);
  });
}

export interface SignatureIndex {
  /** Queues entries (in sequence order) for the worker; `done` runs once they are written. */
  add(pairs: Batch, done: () => void): void;
  /** Sequence numbers of the submissions whose signatures start with `prefix`, among those written. */
  lookup(prefix: bigint): number[];
  /** Everything up to this sequence number is in the index. */
  indexedUpTo(): number;
  /** Writes in the calling thread (start-up catch-up, before the worker has anything to do). */
  addNow(pairs: Batch): void;
  close(): Promise<void>;
}

export function openSignatureIndex(file: string): SignatureIndex {
  const db = openSqlite(file, MIGRATIONS);
  db.defaultSafeIntegers(false);
  const select = db.prepare('SELECT seq FROM signature_index WHERE prefix = ?').pluck();
  const selectUpTo = db.prepare('SELECT seq FROM indexed_up_to WHERE id = 1').pluck();
  const insert = db.prepare('INSERT OR IGNORE INTO signature_index (prefix, seq) VALUES (?, ?)');
  const advance = db.prepare('UPDATE indexed_up_to SET seq = MAX(seq, ?) WHERE id = 1');
  const writeNow = db.transaction((pairs: Batch) => {
    for (let i = 0; i < pairs.length; i += 2) insert.run(pairs[i]!, pairs[i + 1]!);
    if (pairs.length > 0) advance.run(pairs[pairs.length - 1]!);
  });
  const worker = new Worker(path.join(__dirname, 'signature-index-sqlite.js'), { workerData: { signatureIndex: true, file } });
  worker.unref();
  const pending = new Map<number, () => void>();
  let nextId = 1;
  let closed = () => {};
  worker.on('message', (id: number | 'closed') => {
    if (id === 'closed') return closed();
    pending.get(id)?.();
    pending.delete(id);
    if (pending.size === 0) worker.unref();
  });
  return {
    add(pairs, done) {
      const id = nextId++;
      pending.set(id, done);
      worker.ref(); // written before the process may exit
      worker.postMessage({ id, pairs }, [pairs.buffer as ArrayBuffer]);
    },
    lookup: (prefix) => select.all(prefix) as number[],
    indexedUpTo: () => selectUpTo.get() as number,
    addNow: (pairs) => writeNow(pairs),
    async close() {
      await new Promise<void>((resolve) => {
        closed = resolve;
        worker.ref();
        worker.postMessage('close');
      });
      await worker.terminate();
      db.close();
    },
  };
}

/** Where the index of a journal lives: beside it. */
export function signatureIndexFile(journalFile: string): string {
  return path.join(path.dirname(journalFile), `${path.basename(journalFile, '.sqlite')}-signatures.sqlite`);
}
