/**
 * What `getSubmissionStatuses` and `getSubmission` show of one submission: its kind, state,
 * slot, why it did not land, its routes and times, and each transaction's sends (with their
 * evidence, for a protected transaction); or, for one refused before it was journaled, the
 * refusal's reason.
 */
import type { JournalEntry, JournalTransaction } from '../stores/journal';
import type { Refusal } from './recent-refusals';

/** `id` (a signature or bundle ID) as it stands in the journal entry that holds it. */
export function describeSubmission(id: string, entry: JournalEntry) {
  const transactions = entry.transactions.filter((tx) => entry.bundleId === id || tx.signature === id);
  // A protected transaction's sends are each journaled, with their evidence (where, when, after what hold).
  const describe = (tx: JournalTransaction) =>
    entry.antiMev ? { ...outcomeOf(tx), sends: tx.sends.length, evidence: tx.sends } : { ...outcomeOf(tx), sends: tx.attempts + 1 };
  return {
    id,
    kind: entry.kind === 'batch' ? 'batch member' : entry.kind,
    bundleId: entry.bundleId,
    state: transactions[0]!.state,
    slot: transactions[0]!.slot,
    reason: transactions[0]!.reason,
    reasonCode: transactions[0]!.reasonCode,
    antiMev: entry.antiMev,
    routes: entry.routes,
    receivedAt: new Date(entry.createdAt).toISOString(),
    updatedAt: new Date(entry.updatedAt).toISOString(),
    transactions: transactions.map(describe),
  };
}

/** `id`, refused before anything was journaled, with the reason it was refused. */
export function describeRefusal(id: string, refusal: Refusal) {
  const at = new Date(refusal.at).toISOString();
  return {
    id,
    kind: 'refused',
    bundleId: null,
    state: 'rejected',
    slot: null,
    reason: `refused: ${refusal.reason}`,
    reasonCode: refusal.reasonCode,
    antiMev: null,
    routes: [],
    receivedAt: at,
    updatedAt: at,
    transactions: [],
  };
}

/** A transaction's state and why, as both views show it. */
function outcomeOf(tx: JournalTransaction) {
  return { signature: tx.signature, state: tx.state, slot: tx.slot, reason: tx.reason, reasonCode: tx.reasonCode };
}
