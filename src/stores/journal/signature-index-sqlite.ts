/**
 * The journal's signature index (the first 8 bytes of a signature → submission sequence
 * numbers), in a SQLite file of its own.
 *
 * Each entry is a random B-tree insert: about 4 KB of WAL and several microseconds apiece,
 * and a millisecond stall every time a few hundred are written together. None of that
 * belongs on the request thread (a thread of its own writes it, in batches every 200 ms),
 * nor in the journal's database, whose write lock it would hold.
 * The index can be rebuilt from the journal at any time, so it needs no durability of its
 * own: after a crash, start-up indexes what the journal holds beyond the index's highest
 * sequence number (entries are written in sequence order, a batch per transaction, so
 * everything below that number is indexed). Reads run beside the writes (WAL).
 */
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Migrations, SqliteDatabase } from '../database/sqlite-database';
import { multiRowInsert, openSqlite } from '../database/sqlite-database';

const MIGRATIONS: Migrations = [
  `CREATE TABLE signature_index (prefix INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (prefix, seq)) WITHOUT ROWID;
   CREATE TABLE indexed_up_to (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
   INSERT INTO indexed_up_to VALUES (1, 0);`,
];

/** Entries as pairs of (prefix, seq) in one BigInt64Array, in sequence order. */
export type IndexPairs = BigInt64Array;

export interface SignatureIndex {
  /** Writes entries (in sequence order) in one transaction. */
  add(pairs: IndexPairs): void;
  /** Sequence numbers of the submissions whose first signature starts with `prefix`. */
  lookup(prefix: bigint): number[];
  /** Everything up to this sequence number is in the index. */
  indexedUpTo(): number;
  close(): void;
}

export function openSignatureIndex(file: string): SignatureIndex {
  const db: SqliteDatabase = openSqlite(file, MIGRATIONS);
  const select = db.prepare('SELECT seq FROM signature_index WHERE prefix = ?').pluck();
  const selectUpTo = db.prepare('SELECT seq FROM indexed_up_to WHERE id = 1').pluck();
  // Many rows a statement: 2.1–2.5 → 1.4 µs an entry, measured on batches of 3,000 into a growing index.
  const insert = multiRowInsert(db, 'INSERT OR IGNORE INTO signature_index (prefix, seq)', 2);
  const advance = db.prepare('UPDATE indexed_up_to SET seq = MAX(seq, ?) WHERE id = 1');
  const write = db.transaction((pairs: IndexPairs) => {
    // Sorted, neighbouring inserts share B-tree pages.
    const order = Array.from({ length: pairs.length / 2 }, (_, i) => i).sort((a, b) => (pairs[2 * a]! < pairs[2 * b]! ? -1 : 1));
    const values: bigint[] = new Array(pairs.length);
    order.forEach((i, at) => {
      values[2 * at] = pairs[2 * i]!;
      values[2 * at + 1] = pairs[2 * i + 1]!;
    });
    insert(values);
    advance.run(pairs[pairs.length - 1]!);
  });
  return {
    add: (pairs) => {
      if (pairs.length > 0) write(pairs);
    },
    lookup: (prefix) => select.all(prefix) as number[],
    indexedUpTo: () => selectUpTo.get() as number,
    close: () => db.close(),
  };
}

/** Where the index of a journal lives: beside it. */
export function signatureIndexFile(journalFile: string): string {
  return path.join(path.dirname(journalFile), `${path.basename(journalFile, '.sqlite')}-signatures.sqlite`);
}

/** Packs entries for `add` (and for a transfer to another thread). */
export function packIndexPairs(entries: readonly { prefix: bigint; seq: number }[]): IndexPairs {
  const pairs = new BigInt64Array(entries.length * 2);
  entries.forEach((entry, i) => {
    pairs[2 * i] = entry.prefix;
    pairs[2 * i + 1] = BigInt(entry.seq);
  });
  return pairs;
}

type IndexRequest = { id: number; pairs: IndexPairs } | 'close';
type IndexAnswer = { id: number; error?: string } | 'closed';

if (!isMainThread && parentPort !== null && workerData?.signatureIndex === true) {
  const port = parentPort;
  const index = openSignatureIndex(workerData.file as string);
  port.on('message', (request: IndexRequest) => {
    if (request === 'close') {
      index.close();
      port.postMessage('closed' satisfies IndexAnswer);
      return;
    }
    try {
      index.add(request.pairs);
      port.postMessage({ id: request.id } satisfies IndexAnswer);
    } catch (error) {
      port.postMessage({ id: request.id, error: (error as Error).message } satisfies IndexAnswer);
    }
  });
}

export interface SignatureIndexWriter {
  /** Writes entries (in sequence order) on the index's thread; resolves once they are written. */
  add(pairs: IndexPairs): Promise<void>;
  /** Waits for what was handed over, then stops the thread. */
  close(): Promise<void>;
}

export function startSignatureIndexWriter(file: string): SignatureIndexWriter {
  const outstanding = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let closed = () => {};
  /** Once closing, the thread stays referenced until it has said 'closed' (an earlier batch's answer must not let the process exit first). */
  let closing = false;
  let worker: Worker | undefined;
  /** The thread, started again on the next batch if it died (the batches it had are retried by the caller). */
  const thread = (): Worker => {
    if (worker !== undefined) return worker;
    const started = new Worker(path.join(__dirname, 'signature-index-sqlite.js'), { workerData: { signatureIndex: true, file } });
    started.unref();
    started.on('message', (answer: IndexAnswer) => {
      if (answer === 'closed') return closed();
      const waiter = outstanding.get(answer.id)!;
      outstanding.delete(answer.id);
      if (outstanding.size === 0 && !closing) started.unref();
      if (answer.error === undefined) waiter.resolve();
      else waiter.reject(new Error(`signature index write failed: ${answer.error}`));
    });
    started.on('error', (error) => {
      worker = undefined;
      for (const waiter of outstanding.values()) waiter.reject(error);
      outstanding.clear();
      closed();
    });
    worker = started;
    return started;
  };
  return {
    add: (pairs) =>
      new Promise<void>((resolve, reject) => {
        const id = nextId++;
        outstanding.set(id, { resolve, reject });
        const target = thread();
        target.ref(); // written before the process may exit
        target.postMessage({ id, pairs } satisfies IndexRequest, [pairs.buffer as ArrayBuffer]);
      }),
    async close() {
      if (worker === undefined) return;
      const stopping = worker;
      // Messages are answered in order: 'closed' comes after every batch sent before it.
      await new Promise<void>((resolve) => {
        closed = resolve;
        closing = true;
        stopping.ref();
        stopping.postMessage('close' satisfies IndexRequest);
      });
      await stopping.terminate();
    },
  };
}
