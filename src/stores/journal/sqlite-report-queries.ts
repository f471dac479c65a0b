/**
 * The landing report's query on the SQLite journal, run on a thread of its own: a report
 * scans every transaction of its period, and grouping 200,000 of them took 600 ms here,
 * which on the request thread would stall every request meanwhile. The thread opens the
 * journal read-only (WAL: it never blocks the applier), starts with the first report and
 * keeps no hold on the process; a query it fails is rejected, and the next one starts it
 * again if it died.
 */
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from '../database/sqlite-binding';

type Question = { id: number; sql: string; values: unknown[] };
type Answer = { id: number; rows: unknown[] } | { id: number; error: string };

if (!isMainThread && parentPort !== null && workerData?.reportQueries === true) {
  const port = parentPort;
  const db = new Database(workerData.file as string, { readonly: true });
  db.pragma('busy_timeout = 5000');
  port.on('message', ({ id, sql, values }: Question) => {
    let answer: Answer;
    try {
      answer = { id, rows: db.prepare(sql).all(...values) };
    } catch (error) {
      answer = { id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(answer);
  });
}

export interface ReportQueries {
  /** The rows of a read-only query, run on the report thread. */
  all(sql: string, values: readonly unknown[]): Promise<unknown[]>;
  close(): Promise<void>;
}

export function startReportQueries(file: string): ReportQueries {
  const outstanding = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let worker: Worker | undefined;
  const thread = (): Worker => {
    if (worker !== undefined) return worker;
    const started = new Worker(path.join(__dirname, 'sqlite-report-queries.js'), { workerData: { reportQueries: true, file } });
    started.unref();
    started.on('message', (answer: Answer) => {
      const waiter = outstanding.get(answer.id);
      outstanding.delete(answer.id);
      if (outstanding.size === 0) started.unref();
      if ('rows' in answer) waiter?.resolve(answer.rows);
      else waiter?.reject(new Error(`the landing report's query failed: ${answer.error}`));
    });
    const died = (error: Error) => {
      if (worker === started) worker = undefined;
      for (const waiter of outstanding.values()) waiter.reject(error);
      outstanding.clear();
    };
    started.on('error', died);
    started.on('exit', () => died(new Error("the landing report's thread stopped")));
    worker = started;
    return started;
  };
  return {
    all: (sql, values) =>
      new Promise<unknown[]>((resolve, reject) => {
        const id = nextId++;
        outstanding.set(id, { resolve, reject });
        const running = thread();
        // Referenced while it has work, so that a CLI waiting for its report does not exit first.
        running.ref();
        running.postMessage({ id, sql, values: [...values] } satisfies Question);
      }),
    async close() {
      const running = worker;
      worker = undefined;
      await running?.terminate();
    },
  };
}
