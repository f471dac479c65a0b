/**
 * The queries both journals write the same way, SQLite's and PostgreSQL's alike (only
 * their placeholders differ): kept once, so that the two adapters cannot drift apart in
 * what `unfinished()` and `list()` mean.
 */
import type { JournalQuery } from './journal';

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
