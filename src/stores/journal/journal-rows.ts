/**
 * The journal's rows as both adapters read them back (SQLite and PostgreSQL keep the same
 * columns), and the one mapping from rows to a `JournalEntry`.
 */
import { splitReason, type OutcomeReason } from '../../core/outcome-reasons';
import type { JournalEntry, SendEvidence, SubmissionKind, TransactionState } from './journal';

export interface SubmissionRow {
  seq: number;
  kind: SubmissionKind;
  key_id: string;
  /** SQLite stores 0 or 1; PostgreSQL a boolean. */
  anti_mev: number | boolean;
  bundle_id: string | null;
  /** Route names, comma-separated. */
  routes: string;
  created_at: number;
  updated_at: number;
}

export interface TransactionRow {
  seq: number;
  position: number;
  signature: string;
  wire: Buffer;
  state: TransactionState;
  slot: number | null;
  /** Added later (a migration): null in rows written before, whose reason holds the code too. */
  reason_code: OutcomeReason | null;
  reason: string | null;
  /** SQLite stores the JSON as text; PostgreSQL as JSONB, read back parsed. */
  error: unknown;
  attempts: number;
  /** Added later (a migration): null for transactions journaled before, and until one lands. */
  landed_at: number | null;
  slots_to_land: number | null;
}

/** A transaction's reason: its code and words, or for a row written before the code had a column, `code: words` taken apart. */
function reasonOf(tx: TransactionRow) {
  if (tx.reason_code !== null) return { reason: tx.reason, reasonCode: tx.reason_code };
  const { code, words } = splitReason(tx.reason, tx.state);
  return { reason: words, reasonCode: code };
}

/** How each adapter reads back a transaction's error column. */
export const decodeSqliteError = (raw: unknown): unknown => (raw === null ? null : (JSON.parse(raw as string) as unknown));
export const decodePostgresError = (raw: unknown): unknown => raw ?? null;

/** A submission from its row, its transactions' rows (in position order), and each transaction's sends. */
export function entryFromRows(
  row: SubmissionRow,
  transactions: readonly TransactionRow[],
  sendsAt: (position: number) => readonly SendEvidence[],
  decodeError: (raw: unknown) => unknown,
): JournalEntry {
  return {
    seq: row.seq,
    kind: row.kind,
    keyId: row.key_id,
    antiMev: row.anti_mev === true || row.anti_mev === 1,
    bundleId: row.bundle_id,
    routes: row.routes === '' ? [] : row.routes.split(','),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    transactions: transactions.map((tx) => ({
      position: tx.position,
      signature: tx.signature,
      wire: tx.wire,
      state: tx.state,
      slot: tx.slot,
      ...reasonOf(tx),
      error: decodeError(tx.error),
      attempts: tx.attempts,
      landedAt: tx.landed_at ?? null,
      slotsToLand: tx.slots_to_land ?? null,
      sends: sendsAt(tx.position),
    })),
  };
}
