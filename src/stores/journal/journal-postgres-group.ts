/**
 * One group of the PostgreSQL journal's writes (everything written in one turn of the event
 * loop) as the statements that store it, run inside the transaction the group commit opens
 * (journal-postgres-writes.ts). Apart from that queue, so that each reads on its own: here
 * what is written, there when and in which order the callers are answered.
 */
import type pg from 'pg';
import type { NewSubmission, SendRecord, StateChange } from './journal';
import type { Waiter } from './journal-groups';
import { firstSends } from './journal-groups';
import { DB_NOW, LEASE_MS } from './journal-postgres-schema';

export interface Group {
  records: { submission: NewSubmission; resolve: (seq: number) => void; reject: (error: unknown) => void }[];
  changes: StateChange[];
  attempts: { seq: number; position: number }[];
  sends: SendRecord[];
  waiters: Waiter[];
}

export const emptyGroup = (): Group => ({ records: [], changes: [], attempts: [], sends: [], waiters: [] });

/**
 * Writes the group through `client`, in its open transaction; returns the new submissions'
 * sequence numbers, in order. A group of new submissions alone needs no transaction of its
 * own: insertSubmissions is one statement (journal-postgres-writes.ts sends it alone).
 */
export async function writeGroup(client: pg.PoolClient, group: Group, owner: string, now: number): Promise<number[]> {
  const seqs = group.records.length > 0 ? await insertSubmissions(client, group.records, owner, now) : [];
  await updateStates(client, group.changes, now);
  if (group.attempts.length > 0) {
    await client.query(
      `UPDATE submission_transactions t SET attempts = t.attempts + a.n
       FROM (SELECT s, p, COUNT(*)::int AS n FROM UNNEST($1::bigint[], $2::int[]) AS u(s, p) GROUP BY s, p) a
       WHERE t.seq = a.s AND t.position = a.p`,
      [group.attempts.map((a) => a.seq), group.attempts.map((a) => a.position)],
    );
  }
  if (group.sends.length > 0) {
    await client.query('INSERT INTO protected_sends (seq, position, evidence) SELECT * FROM UNNEST($1::bigint[], $2::int[], $3::jsonb[])', [
      group.sends.map((s) => s.seq),
      group.sends.map((s) => s.position),
      group.sends.map((s) => JSON.stringify(s.send)),
    ]);
  }
  return seqs;
}

/** Whether the group holds new submissions and nothing else: one statement stores it all. */
export const onlyRecords = (group: Group): boolean => group.changes.length === 0 && group.attempts.length === 0 && group.sends.length === 0;

/**
 * The group's new submissions, their transactions and the first sends of the protected
 * ones, in one statement (one round trip, atomic on its own): sequence numbers are
 * allocated for the whole group first (`ids`), so that every submission keeps the number it
 * is answered with, and each is leased to this gateway. The wires travel as one binary
 * parameter cut by offsets, not as an array literal of hexadecimal text.
 */
const INSERT_SUBMISSIONS = `
  WITH ids AS MATERIALIZED (
    SELECT nextval('submissions_seq_seq') AS seq, i FROM generate_series(1, $1::int) AS i
  ), subs AS (
    INSERT INTO submissions (seq, kind, key_id, anti_mev, bundle_id, routes, created_at, updated_at, owner, lease_until)
    SELECT ids.seq, t.k, t.key, t.a, t.b, t.r, $7, $7, $8, ${DB_NOW} + $9
    FROM UNNEST($2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[]) WITH ORDINALITY AS t(k, key, a, b, r, i) JOIN ids USING (i)
  ), txs AS (
    INSERT INTO submission_transactions (seq, position, signature, wire, state, reason_code, reason)
    SELECT ids.seq, u.p, u.sig, substring($10::bytea FROM u.o + 1 FOR u.n), u.st, u.rc, u.re
    FROM UNNEST($11::int[], $12::int[], $13::text[], $14::int[], $15::int[], $16::text[], $17::text[], $18::text[])
      AS u(i, p, sig, o, n, st, rc, re) JOIN ids USING (i)
  ), sends AS (
    INSERT INTO protected_sends (seq, position, evidence)
    SELECT ids.seq, v.p, v.e FROM UNNEST($19::int[], $20::int[], $21::jsonb[]) WITH ORDINALITY AS v(i, p, e, n) JOIN ids USING (i) ORDER BY v.n
  )
  SELECT seq FROM ids ORDER BY i`;

export async function insertSubmissions(
  db: pg.Pool | pg.PoolClient,
  records: Group['records'],
  owner: string,
  now: number,
): Promise<number[]> {
  const subs = records.map((r) => r.submission);
  const txs = subs.flatMap((s, i) => s.transactions.map((tx, position) => ({ i: i + 1, position, tx })));
  const wires = Buffer.concat(txs.map((t) => t.tx.wire));
  let offset = 0;
  const offsets = txs.map((t) => {
    const at = offset;
    offset += t.tx.wire.length;
    return at;
  });
  const sends = subs.flatMap((s, i) => firstSends(i + 1, s));
  const { rows } = await db.query<{ seq: number }>({
    name: 'journal-insert-submissions',
    text: INSERT_SUBMISSIONS,
    values: [
      subs.length,
      subs.map((s) => s.kind),
      subs.map((s) => s.keyId),
      subs.map((s) => s.antiMev),
      subs.map((s) => s.bundleId),
      subs.map((s) => s.routes.join(',')),
      now,
      owner,
      LEASE_MS,
      wires,
      txs.map((t) => t.i),
      txs.map((t) => t.position),
      txs.map((t) => t.tx.signature),
      offsets,
      txs.map((t) => t.tx.wire.length),
      txs.map((t) => t.tx.state),
      txs.map((t) => t.tx.reasonCode ?? null),
      txs.map((t) => t.tx.reason ?? null),
      sends.map((s) => s.seq),
      sends.map((s) => s.position),
      sends.map((s) => JSON.stringify(s.send)),
    ],
  });
  return rows.map((r) => r.seq);
}

/** State changes one by one, in order, then the changed submissions' `updated_at`. */
async function updateStates(client: pg.PoolClient, changes: readonly StateChange[], now: number): Promise<void> {
  for (const change of changes) {
    // A reason given (null clears it) replaces code and words; absent keeps both (journal.ts).
    await client.query(
      `UPDATE submission_transactions SET state = $1, slot = COALESCE($2, slot),
         reason_code = CASE WHEN $3 THEN $10 ELSE reason_code END, reason = CASE WHEN $3 THEN $4 ELSE reason END,
         error = COALESCE($5::jsonb, error), landed_at = COALESCE($8, landed_at), slots_to_land = COALESCE($9, slots_to_land)
       WHERE seq = $6 AND position = $7`,
      [
        change.state,
        change.slot ?? null,
        change.reason !== undefined,
        change.reason ?? null,
        change.error === undefined ? null : JSON.stringify(change.error),
        change.seq,
        change.position,
        change.landedAt ?? null,
        change.slotsToLand ?? null,
        change.reasonCode ?? null,
      ],
    );
  }
  const touched = [...new Set(changes.map((c) => c.seq))];
  if (touched.length > 0) await client.query('UPDATE submissions SET updated_at = $1 WHERE seq = ANY($2::bigint[])', [now, touched]);
}
