/**
 * The journal with every state a transaction enters counted on the way in: the one place
 * every state passes (the pipeline, the tracker and the hold queue all record through it),
 * whatever store is behind it. A transaction that ends without landing (or fails) is also
 * counted by its outcome reason and logged with it.
 */
import type { OutcomeReason } from '../../core/outcome-reasons';
import type { TransactionState } from '../../core/transaction-states';
import type { Journal } from './journal';
import { countKeyTransactions, countOutcomeReason, countState } from '../../metrics/metrics';

const FINAL_WITHOUT_LANDING = new Set<TransactionState>(['failed', 'expired', 'rejected']);

/** One log line per transaction that ended without landing (or landed and failed): why, as a code and in words. */
export interface EndedTransaction {
  readonly seq: number;
  readonly position: number;
  /** Its signature, or its bundle's ID (absent when the change did not say). */
  readonly id?: string;
  readonly state: TransactionState;
  readonly reasonCode: OutcomeReason;
  readonly reason: string | null;
}

/** What a transaction's change says about why: its code and words, when it gives them. */
type Why = { readonly reasonCode?: OutcomeReason | null; readonly reason?: string | null };

export function countingJournal(journal: Journal, logEnded: (ended: EndedTransaction) => void = () => {}): Journal {
  /** Counts a transaction entering `state`, and if it ended without landing (or failed), why. */
  function count(seq: number, position: number, id: string | undefined, state: TransactionState, why: Why): void {
    countState(state);
    if (!FINAL_WITHOUT_LANDING.has(state)) return;
    // Without a reason, a failed transaction failed on chain; any other ended for no reason known.
    const reasonCode = why.reasonCode ?? (state === 'failed' ? 'failed_on_chain' : 'not_landed_unknown');
    countOutcomeReason(reasonCode);
    try {
      logEnded({ seq, position, ...(id === undefined ? {} : { id }), state, reasonCode, reason: why.reason ?? null });
    } catch {
      // A log line that cannot be written (no logger yet, at start-up) never fails a journal write.
    }
  }

  return {
    async record(submission) {
      const seq = await journal.record(submission);
      submission.transactions.forEach((tx, position) => count(seq, position, tx.signature, tx.state, tx));
      countKeyTransactions(submission.keyId, submission.transactions.length);
      return seq;
    },
    async update(changes) {
      await journal.update(changes);
      for (const change of changes) count(change.seq, change.position, change.id, change.state, change);
    },
    recordSends: (items) => journal.recordSends(items),
    countAttempts: (items) => journal.countAttempts(items),
    after: (seq) => journal.after(seq),
    since: (sinceMs) => journal.since(sinceMs),
    unfinished: () => journal.unfinished(),
    find: (signatureOrBundleId) => journal.find(signatureOrBundleId),
    list: (query) => journal.list(query),
    lastSeq: () => journal.lastSeq(),
    landingGroups: (query) => journal.landingGroups(query),
    outcomes: (query) => journal.outcomes(query),
    ...(journal.leases === undefined ? {} : { leases: journal.leases }),
    close: () => journal.close(),
  };
}
