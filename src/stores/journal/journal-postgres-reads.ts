/**
 * The PostgreSQL journal's reads: submissions by sequence number, by time, by signature or
 * bundle ID, unfinished, or listed, each read back with its transactions and protected
 * sends in two more queries for the whole set (not two per submission).
 */
import type pg from 'pg';
import type { Journal, JournalEntry, JournalQuery, SendEvidence } from './journal';
import { decodePostgresError, entryFromRows, type SubmissionRow, type TransactionRow } from './journal-rows';
import {
  landingQuery,
  landingGroupFrom,
  listQuery,
  outcomeFrom,
  outcomeQuery,
  SELECT_UNFINISHED,
  type LandingGroupRecord,
  type OutcomeRecord,
} from './journal-queries';

/** Runs a query for submission rows and reads them back as entries, in the query's order. */
export type SelectEntries = (sql: string, values: unknown[]) => Promise<JournalEntry[]>;

export interface PostgresReads extends Pick<
  Journal,
  'after' | 'since' | 'unfinished' | 'find' | 'list' | 'lastSeq' | 'landingGroups' | 'outcomes'
> {
  readonly select: SelectEntries;
}

export function createPostgresReads(pool: pg.Pool): PostgresReads {
  const select: SelectEntries = async (sql, values) => hydrate(pool, (await pool.query<SubmissionRow>(sql, values)).rows);
  return {
    select,
    after: (seq) => select('SELECT * FROM submissions WHERE seq > $1 ORDER BY seq', [seq]),
    since: (sinceMs) => select('SELECT * FROM submissions WHERE created_at >= $1 ORDER BY seq', [sinceMs]),
    unfinished: () => select(SELECT_UNFINISHED, []),
    find: (id) =>
      select(
        'SELECT * FROM submissions WHERE bundle_id = $1 OR seq IN (SELECT seq FROM submission_transactions WHERE signature = $1) ORDER BY seq DESC',
        [id],
      ),
    list(query: JournalQuery) {
      const { sql, values } = listQuery(query, (n) => `$${n}`);
      return select(sql, values);
    },
    async lastSeq() {
      return (await pool.query<{ seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM submissions')).rows[0]!.seq;
    },
    async landingGroups(query) {
      const { sql, values } = landingQuery(query, 0, (n) => `$${n}`);
      return (await pool.query<LandingGroupRecord>(sql, values)).rows.map(landingGroupFrom);
    },
    async outcomes(query) {
      const { sql, values } = outcomeQuery(query, 0, (n) => `$${n}`);
      return (await pool.query<OutcomeRecord>(sql, values)).rows.map(outcomeFrom);
    },
  };
}

/** Submissions from their rows: their transactions, then the sends of the protected ones. */
async function hydrate(pool: pg.Pool, rows: SubmissionRow[]): Promise<JournalEntry[]> {
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
  return rows.map((row) => entryFromRows(row, txsBySeq.get(row.seq) ?? [], (position) => sendsOf(row.seq, position), decodePostgresError));
}
