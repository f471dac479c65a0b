/**
 * The PostgreSQL journal's group commit: everything written in one turn of the event loop
 * is one PostgreSQL transaction, and each caller's promise resolves after its COMMIT
 * (durable, `synchronous_commit` as the server has it). One group is in flight at a time;
 * writes arriving meanwhile form the next. A group of new submissions alone (the common
 * one: state changes come later, from the tracker) is a single statement, one round trip
 * with no BEGIN and COMMIT of its own. The statements a group becomes are in
 * journal-postgres-group.ts; this file decides when they run and who is answered.
 */
import type pg from 'pg';
import { createPool } from '../database/postgres-database';
import type { Journal } from './journal';
import { emptyGroup, insertSubmissions, onlyRecords, writeGroup, type Group } from './journal-postgres-group';

export interface PostgresWrites extends Pick<Journal, 'record' | 'update' | 'recordSends' | 'countAttempts'> {
  /** Commits what is pending, after the group in flight; resolves once nothing is in flight. */
  drain(): Promise<void>;
}

/** One group is in flight at a time, through one connection; a second for the next while the first is given back. */
const WRITE_CONNECTIONS = 2;

/**
 * The group commit's own connections, apart from the reads': its statement for new
 * submissions is prepared once a connection, and a generic plan spares planning it for each
 * group (PostgreSQL otherwise plans it afresh every time, its estimate of the arrays' rows
 * differing: measured 130 µs of the backend's CPU a group, a third of what a group of one
 * cost it). The reads, whose best plans depend on their values, keep their own pool.
 */
export function createWritePool(url: string, schema: string): pg.Pool {
  return createPool({ url, schema, max: WRITE_CONNECTIONS, settings: { plan_cache_mode: 'force_generic_plan' } });
}

export function createPostgresWrites(pool: pg.Pool, owner: string): PostgresWrites {
  let pending = emptyGroup();
  let scheduled = false;
  let inFlight: Promise<void> | undefined;

  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void flush();
    });
  };

  /** Commits the pending group, after the one in flight. */
  const flush = async (): Promise<void> => {
    if (inFlight !== undefined) {
      await inFlight;
      if (pending.records.length + pending.changes.length + pending.attempts.length + pending.sends.length + pending.waiters.length > 0)
        schedule();
      return;
    }
    const group = pending;
    pending = emptyGroup();
    inFlight = commit(group).finally(() => {
      inFlight = undefined;
    });
    await inFlight;
  };

  const commit = async (group: Group): Promise<void> => {
    let seqs: number[] = [];
    if (onlyRecords(group)) {
      // The common group under load: new submissions alone, one statement, committed on its own.
      try {
        if (group.records.length > 0) seqs = await insertSubmissions(pool, group.records, owner, Date.now());
      } catch (error) {
        fail(group, error);
        return;
      }
      answer(group, seqs);
      return;
    }
    const client = await pool.connect().catch((error: unknown) => {
      fail(group, error);
      return undefined;
    });
    if (client === undefined) return;
    try {
      await client.query('BEGIN');
      seqs = await writeGroup(client, group, owner, Date.now());
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release(true);
      fail(group, error);
      return;
    }
    client.release();
    answer(group, seqs);
  };

  const answer = (group: Group, seqs: readonly number[]) => {
    group.records.forEach((r, i) => r.resolve(seqs[i]!));
    for (const waiter of group.waiters) waiter.resolve();
  };

  const fail = (group: Group, error: unknown) => {
    for (const r of group.records) r.reject(error);
    for (const waiter of group.waiters) waiter.reject(error);
  };

  const enqueue = (fill: (group: Group) => void) =>
    new Promise<void>((resolve, reject) => {
      fill(pending);
      pending.waiters.push({ resolve, reject });
      schedule();
    });

  return {
    record(submission) {
      return new Promise<number>((resolve, reject) => {
        pending.records.push({ submission, resolve, reject });
        schedule();
      });
    },
    async update(changes) {
      if (changes.length > 0) await enqueue((g) => g.changes.push(...changes));
    },
    async recordSends(items) {
      if (items.length > 0) await enqueue((g) => g.sends.push(...items));
    },
    async countAttempts(items) {
      if (items.length > 0) await enqueue((g) => g.attempts.push(...items));
    },
    async drain() {
      await flush();
      await inFlight;
    },
  };
}
