/**
 * The journal with its writes told to the events sink once they are durable, and the
 * entries read back at start-up, in recovery and in a takeover handed to it to derive again
 * (events-sink.ts). Every state passes through the journal, so this is the one place events
 * come from.
 */
import type { Journal, SubmissionLeases } from '../stores/journal';
import type { EventsSink } from './events-sink';

/** A key's unfinished submissions read at most this many at a time, when it comes to be wanted. */
const CATCH_UP_LIMIT = 10_000;

export function eventingJournal(journal: Journal, sink: EventsSink): Journal {
  sink.readFrom(async (keyId) => [
    ...(await journal.list({ keyId, state: 'forwarded', limit: CATCH_UP_LIMIT })),
    ...(await journal.list({ keyId, state: 'held', limit: CATCH_UP_LIMIT })),
  ]);
  const leases: SubmissionLeases | undefined =
    journal.leases === undefined
      ? undefined
      : {
          renew: (following) => journal.leases!.renew(following),
          async takeOver(limit) {
            const entries = await journal.leases!.takeOver(limit);
            sink.reconcile(entries, Date.now());
            return entries;
          },
        };
  return {
    async record(submission) {
      const seq = await journal.record(submission);
      sink.recorded(seq, submission, Date.now());
      return seq;
    },
    async update(changes) {
      await journal.update(changes);
      sink.changed(changes, Date.now());
    },
    async recordSends(items) {
      await journal.recordSends(items);
      sink.sent(items, Date.now());
    },
    countAttempts: (items) => journal.countAttempts(items),
    after: (seq) => journal.after(seq),
    async since(sinceMs) {
      const entries = await journal.since(sinceMs);
      sink.reconcile(entries, Date.now());
      return entries;
    },
    async unfinished() {
      const entries = await journal.unfinished();
      sink.reconcile(entries, Date.now());
      return entries;
    },
    find: (signatureOrBundleId) => journal.find(signatureOrBundleId),
    list: (query) => journal.list(query),
    lastSeq: () => journal.lastSeq(),
    landingGroups: (query) => journal.landingGroups(query),
    outcomes: (query) => journal.outcomes(query),
    ...(leases === undefined ? {} : { leases }),
    close: () => journal.close(),
  };
}
