/**
 * What the two journals' group commits share: a caller waiting for its group to be
 * durable, and the first sends that come with a new submission (a protected transaction
 * sent before the answer), which both record beside the submission in the same group.
 */
import type { NewSubmission, SendRecord } from './journal';

/** A caller's promise, settled once its group is durable (or failed). */
export interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The sends a new submission came with, as records under its sequence number, in position order. */
export function firstSends(seq: number, submission: NewSubmission): SendRecord[] {
  const sends: SendRecord[] = [];
  submission.transactions.forEach((tx, position) => {
    if (tx.send !== undefined) sends.push({ seq, position, send: tx.send });
  });
  return sends;
}
