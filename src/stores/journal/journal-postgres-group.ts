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

/** Writes the group through `client`, in its open transaction; returns the new submissions' sequence numbers, in order. */
export async function writeGroup(client: pg.PoolClient, group: Group, owner: string, now: number): Promise<number[]> {
  const seqs = group.records.length > 0 ? await insertSubmissions(client, group, owner, now) : [];
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

/**
 * The group's new submissions and their transactions, under sequence numbers allocated for
 * the whole group first, so that every submission keeps the number it is answered with; each
 * is leased to this gateway. Their first sends join the group's sends.
 */
async function insertSubmissions(client: pg.PoolClient, group: Group, owner: string, now: number): Promise<number[]> {
  const seqs = (
    await client.query<{ seq: number }>("SELECT nextval('submissions_seq_seq') AS seq FROM generate_series(1, $1)", [group.records.length])
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
    `INSERT INTO submission_transactions (seq, position, signature, wire, state, reason_code, reason)
     SELECT * FROM UNNEST($1::bigint[], $2::int[], $3::text[], $4::bytea[], $5::text[], $6::text[], $7::text[])`,
    [
      rows.map((r) => r.seq),
      rows.map((r) => r.position),
      rows.map((r) => r.tx.signature),
      rows.map((r) => r.tx.wire),
      rows.map((r) => r.tx.state),
      rows.map((r) => r.tx.reasonCode ?? null),
      rows.map((r) => r.tx.reason ?? null),
    ],
  );
  // First sends of protected transactions, which came with their submission.
  subs.forEach((s, i) => group.sends.push(...firstSends(seqs[i]!, s)));
  return seqs;
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
