/**
 * The submission journal in PostgreSQL, shared by the gateways of a cluster: the same
 * tables as SQLite's (one row per submission, one per transaction, protected sends with
 * their evidence), and the same group commit: everything written in one turn of the event
 * loop is one PostgreSQL transaction, and each caller's promise resolves after its COMMIT
 * (durable, `synchronous_commit` as the server has it). One group is in flight at a time;
 * writes arriving meanwhile form the next.
 *
 * Sequence numbers come from the table's sequence, allocated for the whole group first, so
 * that every submission keeps the number it is answered with.
 */
import crypto from 'node:crypto';
import type { Journal, JournalEntry, JournalQuery, NewSubmission, SendEvidence, SendRecord, StateChange } from './journal';
import { createPool, migrate, type PostgresMigrations } from './postgres-database';
import { decodePostgresError, entryFromRows, type SubmissionRow, type TransactionRow } from './journal-rows';

const MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE submissions (
     seq BIGSERIAL PRIMARY KEY,
     kind TEXT NOT NULL,
     key_id TEXT NOT NULL,
     anti_mev BOOLEAN NOT NULL,
     bundle_id TEXT,
     routes TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX submissions_bundle_id ON submissions (bundle_id) WHERE bundle_id IS NOT NULL;
   CREATE INDEX submissions_created_at ON submissions (created_at);
   CREATE INDEX submissions_key_id ON submissions (key_id, seq);
   CREATE TABLE submission_transactions (
     seq BIGINT NOT NULL REFERENCES submissions (seq),
     position INTEGER NOT NULL,
     signature TEXT NOT NULL,
     wire BYTEA NOT NULL,
     state TEXT NOT NULL,
     slot BIGINT,
     reason TEXT,
     error JSONB,
     attempts INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (seq, position)
   );
   CREATE INDEX submission_transactions_signature ON submission_transactions (signature);
   CREATE INDEX submission_transactions_unfinished ON submission_transactions (seq) WHERE state IN ('forwarded', 'held');
   CREATE TABLE protected_sends (
     id BIGSERIAL PRIMARY KEY,
     seq BIGINT NOT NULL,
     position INTEGER NOT NULL,
     evidence JSONB NOT NULL
   );
   CREATE INDEX protected_sends_seq ON protected_sends (seq);`,
  // Rebroadcast ownership: the gateway following each submission, until when (database time, ms).
  `ALTER TABLE submissions ADD COLUMN owner TEXT, ADD COLUMN lease_until BIGINT;`,
];

/** How long a lease lasts without renewal: a stopped gateway's submissions are taken over after this. */
export const LEASE_MS = 3_000;
/** The database's clock in epoch milliseconds: one clock for every gateway's leases. */
const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
/** Submissions with a transaction not yet final (the partial index drives it). */
const UNFINISHED = "SELECT seq FROM submission_transactions WHERE state IN ('forwarded', 'held')";

interface Group {
  records: { submission: NewSubmission; resolve: (seq: number) => void; reject: (error: unknown) => void }[];
  changes: StateChange[];
  attempts: { seq: number; position: number }[];
  sends: SendRecord[];
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
}

const emptyGroup = (): Group => ({ records: [], changes: [], attempts: [], sends: [], waiters: [] });

export async function createPostgresJournal(
  url: string,
  schema: string,
  owner = `gw_${crypto.randomBytes(6).toString('hex')}`,
): Promise<Journal> {
  const pool = createPool({ url, schema, max: 8 });
  try {
    await migrate(pool, schema, 'journal', MIGRATIONS);
  } catch (error) {
    await pool.end();
    throw error;
  }

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
    const client = await pool.connect().catch((error: unknown) => {
      fail(group, error);
      return undefined;
    });
    if (client === undefined) return;
    try {
      await client.query('BEGIN');
      const now = Date.now();
      if (group.records.length > 0) {
        seqs = (
          await client.query<{ seq: number }>("SELECT nextval('submissions_seq_seq') AS seq FROM generate_series(1, $1)", [
            group.records.length,
          ])
        ).rows.map((r) => r.seq);
        const subs = group.records.map((r) => r.submission);
        await client.query(
          `INSERT INTO submissions (seq, kind, key_id, anti_mev, bundle_id, routes, created_at, updated_at, owner, lease_until)
           SELECT s, k, key, a, b, r, $7, $7, $8, ${DB_NOW} + $9 FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[]) AS t(s, k, key, a, b, r)`,
          [
            seqs,
            subs.map((s) => s.kind),
            subs.map((s) => s.keyId),
            subs.map((s) => s.antiMev),
            subs.map((s) => s.bundleId),
            subs.map((s) => s.routes.join(',')),
            now,
            owner,
            LEASE_MS,
          ],
        );
        const rows = subs.flatMap((s, i) => s.transactions.map((tx, position) => ({ seq: seqs[i]!, position, tx })));
        await client.query(
          `INSERT INTO submission_transactions (seq, position, signature, wire, state, reason)
           SELECT * FROM UNNEST($1::bigint[], $2::int[], $3::text[], $4::bytea[], $5::text[], $6::text[])`,
          [
            rows.map((r) => r.seq),
            rows.map((r) => r.position),
            rows.map((r) => r.tx.signature),
            rows.map((r) => r.tx.wire),
            rows.map((r) => r.tx.state),
            rows.map((r) => r.tx.reason ?? null),
          ],
        );
        // First sends of protected transactions, which came with their submission.
        subs.forEach((s, i) =>
          s.transactions.forEach((tx, position) => {
            if (tx.send !== undefined) group.sends.push({ seq: seqs[i]!, position, send: tx.send });
          }),
        );
      }
      for (const change of group.changes) {
        // A reason of null clears the one before; absent keeps it (journal.ts).
        await client.query(
          `UPDATE submission_transactions SET state = $1, slot = COALESCE($2, slot),
             reason = CASE WHEN $3 THEN NULL ELSE COALESCE($4, reason) END, error = COALESCE($5::jsonb, error)
           WHERE seq = $6 AND position = $7`,
          [
            change.state,
            change.slot ?? null,
            change.reason === null,
            change.reason ?? null,
            change.error === undefined ? null : JSON.stringify(change.error),
            change.seq,
            change.position,
          ],
        );
      }
      const touched = [...new Set(group.changes.map((c) => c.seq))];
      if (touched.length > 0) await client.query('UPDATE submissions SET updated_at = $1 WHERE seq = ANY($2::bigint[])', [now, touched]);
      if (group.attempts.length > 0) {
        await client.query(
          `UPDATE submission_transactions t SET attempts = t.attempts + a.n
           FROM (SELECT s, p, COUNT(*)::int AS n FROM UNNEST($1::bigint[], $2::int[]) AS u(s, p) GROUP BY s, p) a
           WHERE t.seq = a.s AND t.position = a.p`,
          [group.attempts.map((a) => a.seq), group.attempts.map((a) => a.position)],
        );
      }
      if (group.sends.length > 0) {
        await client.query(
          'INSERT INTO protected_sends (seq, position, evidence) SELECT * FROM UNNEST($1::bigint[], $2::int[], $3::jsonb[])',
          [group.sends.map((s) => s.seq), group.sends.map((s) => s.position), group.sends.map((s) => JSON.stringify(s.send))],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release(true);
      fail(group, error);
      return;
    }
    client.release();
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

  const hydrate = async (rows: SubmissionRow[]): Promise<JournalEntry[]> => {
    if (rows.length === 0) return [];
    const seqs = rows.map((r) => r.seq);
    const txs = (
      await pool.query<TransactionRow>('SELECT * FROM submission_transactions WHERE seq = ANY($1::bigint[]) ORDER BY seq, position', [seqs])
    ).rows;
    const protectedSeqs = rows.filter((r) => r.anti_mev).map((r) => r.seq);
    const sends =
      protectedSeqs.length === 0
        ? []
        : (
            await pool.query<{ seq: number; position: number; evidence: SendEvidence }>(
              'SELECT seq, position, evidence FROM protected_sends WHERE seq = ANY($1::bigint[]) ORDER BY id',
              [protectedSeqs],
            )
          ).rows;
    const txsBySeq = new Map<number, TransactionRow[]>();
    for (const tx of txs) {
      const list = txsBySeq.get(tx.seq);
      if (list === undefined) txsBySeq.set(tx.seq, [tx]);
      else list.push(tx);
    }
    const sendsByTransaction = new Map<string, SendEvidence[]>();
    for (const send of sends) {
      const key = `${send.seq}:${send.position}`;
      const list = sendsByTransaction.get(key);
      if (list === undefined) sendsByTransaction.set(key, [send.evidence]);
      else list.push(send.evidence);
    }
    const sendsOf = (seq: number, position: number) => sendsByTransaction.get(`${seq}:${position}`) ?? [];
    return rows.map((row) =>
      entryFromRows(row, txsBySeq.get(row.seq) ?? [], (position) => sendsOf(row.seq, position), decodePostgresError),
    );
  };
  const select = async (sql: string, values: unknown[]) => hydrate((await pool.query<SubmissionRow>(sql, values)).rows);

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
    after: (seq) => select('SELECT * FROM submissions WHERE seq > $1 ORDER BY seq', [seq]),
    since: (sinceMs) => select('SELECT * FROM submissions WHERE created_at >= $1 ORDER BY seq', [sinceMs]),
    unfinished: () =>
      select(
        "SELECT * FROM submissions WHERE seq IN (SELECT DISTINCT seq FROM submission_transactions WHERE state IN ('forwarded', 'held')) ORDER BY seq",
        [],
      ),
    find: (id) =>
      select(
        'SELECT * FROM submissions WHERE bundle_id = $1 OR seq IN (SELECT seq FROM submission_transactions WHERE signature = $1) ORDER BY seq DESC',
        [id],
      ),
    list(query: JournalQuery) {
      const where: string[] = [];
      const values: unknown[] = [];
      if (query.keyId !== undefined) {
        values.push(query.keyId);
        where.push(`key_id = $${values.length}`);
      }
      if (query.state !== undefined) {
        values.push(query.state);
        where.push(`seq IN (SELECT seq FROM submission_transactions WHERE state = $${values.length})`);
      }
      values.push(query.limit ?? 100);
      return select(
        `SELECT * FROM submissions ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${values.length}`,
        values,
      );
    },
    leases: {
      async renew(following) {
        await pool.query(`UPDATE submissions SET lease_until = ${DB_NOW} + $1 WHERE owner = $2 AND seq IN (${UNFINISHED})`, [
          LEASE_MS,
          owner,
        ]);
        if (following.length === 0) return [];
        return (
          await pool.query<{ seq: number }>('SELECT seq FROM submissions WHERE seq = ANY($1::bigint[]) AND owner IS DISTINCT FROM $2', [
            following,
            owner,
          ])
        ).rows.map((r) => r.seq);
      },
      async takeOver(limit) {
        const taken = await pool.query<{ seq: number }>(
          `UPDATE submissions SET owner = $1, lease_until = ${DB_NOW} + $2
           WHERE seq IN (
             SELECT seq FROM submissions
             WHERE seq IN (${UNFINISHED}) AND (lease_until IS NULL OR lease_until < ${DB_NOW})
             ORDER BY seq LIMIT $3
             FOR UPDATE SKIP LOCKED)
           RETURNING seq`,
          [owner, LEASE_MS, limit],
        );
        if (taken.rows.length === 0) return [];
        return select('SELECT * FROM submissions WHERE seq = ANY($1::bigint[]) ORDER BY seq', [taken.rows.map((r) => r.seq)]);
      },
    },
    async lastSeq() {
      return (await pool.query<{ seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM submissions')).rows[0]!.seq;
    },
    async close() {
      await flush();
      await inFlight;
      await pool.end();
    },
  };
}
