/**
 * The SQLite journal's reads. Each first brings SQLite up to date with every write answered
 * so far (`settle`: the log's frames applied), so that reads see every write; then reads
 * submissions with their transactions and protected sends.
 */
import type { Journal, JournalEntry, JournalQuery, SendEvidence } from './journal';
import { decodeSqliteError, entryFromRows, type SubmissionRow, type TransactionRow } from './journal-rows';
import {
  landingQuery,
  landingGroupFrom,
  listQuery,
  outcomeFrom,
  outcomeQuery,
  type LandingGroupRecord,
  type OutcomeRecord,
} from './journal-queries';
import { lastSeqIn, type JournalStatements } from './journal-sqlite-statements';
import type { JournalSignatures } from './journal-sqlite-signatures';
import type { SqliteDatabase } from '../database/sqlite-database';
import type { ReportQueries } from './sqlite-report-queries';

export type SqliteReads = Pick<Journal, 'after' | 'since' | 'unfinished' | 'find' | 'list' | 'lastSeq' | 'landingGroups' | 'outcomes'>;

export function createSqliteReads(
  db: SqliteDatabase,
  statements: JournalStatements,
  signatures: JournalSignatures,
  settle: () => Promise<unknown>,
  reportQueries: ReportQueries,
): SqliteReads {
  const { selectAfter, selectFrom, selectCreatedAt, selectUnfinished, selectSends, selectByBundle, selectSubmission, selectTransactions } =
    statements;

  /**
   * The first sequence number created at or after `sinceMs`, by binary search: sequence
   * numbers grow with time (a clock stepping back can only make the search start early,
   * and the caller filters on created_at). Gaps in the numbers are stepped over by the
   * `seq >= ?` look-up.
   */
  const firstCreatedSince = (sinceMs: number): number => {
    let low = 1;
    let high = lastSeqIn(statements) + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const row = selectCreatedAt.get(middle) as { seq: number; created_at: number } | undefined;
      if (row === undefined || row.created_at >= sinceMs) high = middle;
      else low = row.seq + 1;
    }
    return low;
  };

  /** A protected submission's sends, by transaction position. */
  const sendsOf = (row: SubmissionRow): Map<number, SendEvidence[]> => {
    const byPosition = new Map<number, SendEvidence[]>();
    if (row.anti_mev !== 1) return byPosition;
    for (const send of selectSends.all(row.seq) as { position: number; evidence: string }[]) {
      const list = byPosition.get(send.position) ?? [];
      list.push(JSON.parse(send.evidence) as SendEvidence);
      byPosition.set(send.position, list);
    }
    return byPosition;
  };

  const hydrate = (rows: SubmissionRow[]): JournalEntry[] =>
    rows.map((row) => {
      const sends = sendsOf(row);
      return entryFromRows(
        row,
        selectTransactions.all(row.seq) as TransactionRow[],
        (position) => sends.get(position) ?? [],
        decodeSqliteError,
      );
    });

  return {
    async after(seq) {
      await settle();
      return hydrate(selectAfter.all(seq) as SubmissionRow[]);
    },
    async since(sinceMs) {
      await settle();
      return hydrate((selectFrom.all(firstCreatedSince(sinceMs)) as SubmissionRow[]).filter((row) => row.created_at >= sinceMs));
    },
    async unfinished() {
      await settle();
      return hydrate(selectUnfinished.all() as SubmissionRow[]);
    },
    async find(id) {
      await settle();
      const seqs = signatures.seqsOf(id);
      for (const row of selectByBundle.all(id) as { seq: number }[]) seqs.add(row.seq);
      const rows = [...seqs].sort((a, b) => b - a).map((seq) => selectSubmission.get(seq) as SubmissionRow);
      // A prefix can be shared: keep the entries that really hold this signature or bundle ID.
      return hydrate(rows).filter((entry) => entry.bundleId === id || entry.transactions.some((tx) => tx.signature === id));
    },
    async list(query: JournalQuery) {
      await settle();
      const { sql, values } = listQuery(query, () => '?');
      return hydrate(db.prepare(sql).all(...values) as SubmissionRow[]);
    },
    async lastSeq() {
      await settle();
      return lastSeqIn(statements);
    },
    async landingGroups(query) {
      await settle();
      // Sequence numbers grow with time: the first one of the period bounds the scan (there is no index on created_at).
      const { sql, values } = landingQuery(query, firstCreatedSince(query.sinceMs), () => '?');
      // The scan runs on a thread of its own (sqlite-report-queries.ts): it may take long.
      return ((await reportQueries.all(sql, values)) as LandingGroupRecord[]).map(landingGroupFrom);
    },
    async outcomes(query) {
      await settle();
      const { sql, values } = outcomeQuery(query, firstCreatedSince(query.sinceMs), () => '?');
      return ((await reportQueries.all(sql, values)) as OutcomeRecord[]).map(outcomeFrom);
    },
  };
}
