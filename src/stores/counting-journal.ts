/**
 * The journal with every state a transaction enters counted on the way in: the one place
 * every state passes (the pipeline, the tracker and the hold queue all record through it),
 * whatever store is behind it.
 */
import type { Journal } from './journal';
import { countKeyTransactions, countState } from '../metrics/metrics';

export function countingJournal(journal: Journal): Journal {
  return {
    async record(submission) {
      const seq = await journal.record(submission);
      for (const tx of submission.transactions) countState(tx.state);
      countKeyTransactions(submission.keyId, submission.transactions.length);
      return seq;
    },
    async update(changes) {
      await journal.update(changes);
      for (const change of changes) countState(change.state);
    },
    recordSends: (items) => journal.recordSends(items),
    countAttempts: (items) => journal.countAttempts(items),
    after: (seq) => journal.after(seq),
    since: (sinceMs) => journal.since(sinceMs),
    unfinished: () => journal.unfinished(),
    find: (signatureOrBundleId) => journal.find(signatureOrBundleId),
    list: (query) => journal.list(query),
    lastSeq: () => journal.lastSeq(),
    landingRows: (query) => journal.landingRows(query),
    ...(journal.leases === undefined ? {} : { leases: journal.leases }),
    close: () => journal.close(),
  };
}
