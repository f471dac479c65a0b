/**
 * The queries both journals write the same way, SQLite's and PostgreSQL's alike (only
 * their placeholders differ): kept once, so that the two adapters cannot drift apart in
 * what `unfinished()` and `list()` mean.
 */
import type {
  JournalQuery,
  LandingQuery,
  LandingGroup,
  OutcomeQuery,
  SubmissionKind,
  TransactionOutcome,
  TransactionState,
} from './journal';

/** Submissions with a transaction not yet final; the states as literals, as in the partial index's condition, so that the index is used. */
export const SELECT_UNFINISHED =
  "SELECT * FROM submissions WHERE seq IN (SELECT DISTINCT seq FROM submission_transactions WHERE state IN ('forwarded', 'held')) ORDER BY seq";

/** `list()`'s query, newest first, with its values in placeholder order (`placeholder(n)` names the n-th, from 1). */
export function listQuery(query: JournalQuery, placeholder: (n: number) => string): { sql: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  if (query.keyId !== undefined) {
    values.push(query.keyId);
    where.push(`key_id = ${placeholder(values.length)}`);
  }
  if (query.state !== undefined) {
    values.push(query.state);
    where.push(`seq IN (SELECT seq FROM submission_transactions WHERE state = ${placeholder(values.length)})`);
  }
  values.push(query.limit ?? 100);
  const condition = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  return { sql: `SELECT * FROM submissions ${condition} ORDER BY seq DESC LIMIT ${placeholder(values.length)}`, values };
}

/**
 * `landingGroups()`'s query: the transactions of the submissions received from `fromSeq` on
 * (SQLite finds the first by time; PostgreSQL passes 0) at or after `sinceMs`, counted by
 * what the report tells apart, so that the database sums and the report reads a few groups.
 * The time to land is counted from the submission's `created_at`, the journal's receipt
 * time, so that both figures start from the same moment in either journal.
 */
export function landingQuery(query: LandingQuery, fromSeq: number, placeholder: (n: number) => string): { sql: string; values: unknown[] } {
  const values: unknown[] = [fromSeq, query.sinceMs];
  let sql = `SELECT s.kind, s.key_id, s.routes, t.state, t.landed_at - s.created_at AS ms_to_land, t.slots_to_land,
       COUNT(*) AS transactions, COUNT(DISTINCT s.seq) AS submissions
     FROM submissions s JOIN submission_transactions t ON t.seq = s.seq
     WHERE s.seq >= ${placeholder(1)} AND s.created_at >= ${placeholder(2)}`;
  if (query.keyId !== undefined) {
    values.push(query.keyId);
    sql += ` AND s.key_id = ${placeholder(3)}`;
  }
  const columns = 's.kind, s.key_id, s.routes, t.state, t.landed_at - s.created_at, t.slots_to_land';
  return { sql: `${sql} GROUP BY ${columns}`, values };
}

export interface LandingGroupRecord {
  kind: SubmissionKind;
  key_id: string;
  routes: string;
  state: TransactionState;
  ms_to_land: number | null;
  slots_to_land: number | null;
  transactions: number;
  submissions: number;
}

/** A row of `landingQuery` as the report reads it. */
export const landingGroupFrom = (row: LandingGroupRecord): LandingGroup => ({
  kind: row.kind,
  keyId: row.key_id,
  route: row.routes.split(',').join('+'),
  state: row.state,
  msToLand: row.ms_to_land,
  slotsToLand: row.slots_to_land,
  transactions: row.transactions,
  submissions: row.submissions,
});

/**
 * `outcomes()`'s query: the transactions of the submissions received from `fromSeq` on at or
 * after `sinceMs`, newest submission first, at most `limit` of them.
 */
export function outcomeQuery(query: OutcomeQuery, fromSeq: number, placeholder: (n: number) => string): { sql: string; values: unknown[] } {
  return {
    sql: `SELECT s.seq, t.position, s.kind, s.key_id, s.routes, s.created_at, t.signature, t.wire, t.state, t.slot, t.slots_to_land
     FROM submissions s JOIN submission_transactions t ON t.seq = s.seq
     WHERE s.seq >= ${placeholder(1)} AND s.created_at >= ${placeholder(2)}
     ORDER BY s.seq DESC, t.position LIMIT ${placeholder(3)}`,
    values: [fromSeq, query.sinceMs, query.limit],
  };
}

export interface OutcomeRecord {
  seq: number | string;
  position: number;
  kind: SubmissionKind;
  key_id: string;
  routes: string;
  created_at: number | string;
  signature: string;
  /** A Buffer (PostgreSQL), or the bytes as the report thread posts them back (SQLite). */
  wire: Uint8Array;
  state: TransactionState;
  slot: number | string | null;
  slots_to_land: number | null;
}

/** A row of `outcomeQuery` (PostgreSQL's bigints arrive as strings). */
export const outcomeFrom = (row: OutcomeRecord): TransactionOutcome => ({
  seq: Number(row.seq),
  position: row.position,
  kind: row.kind,
  keyId: row.key_id,
  route: row.routes.split(',').join('+'),
  createdAt: Number(row.created_at),
  signature: row.signature,
  wire: Buffer.from(row.wire.buffer, row.wire.byteOffset, row.wire.byteLength),
  state: row.state,
  slot: row.slot === null ? null : Number(row.slot),
  slotsToLand: row.slots_to_land,
});
