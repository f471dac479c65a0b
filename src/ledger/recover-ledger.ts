/**
 * Crash recovery for the embedded ledger. Its state is saved on shutdown and every few
 * seconds; what was accepted after the last save is in the journal. Replaying those
 * submissions in order restores it: transactions the saved state already holds are
 * refused as already processed, so replaying too much is harmless, and replaying too
 * little is what the watermark prevents.
 */
import type { Journal } from '../stores/journal';
import { restoreValidatedTransaction } from '../validation/validate-transaction';
import type { LocalLedger } from './local-ledger';

/**
 * States of transactions that never reached the ledger, or that it refused: not replayed.
 * A held one has not reached it yet (it will be sent when released after the restart).
 */
const NOT_EXECUTED = new Set(['rejected', 'expired', 'held']);

export async function replayJournal(ledger: LocalLedger, journal: Journal): Promise<{ replayed: number; lastSeq: number }> {
  let replayed = 0;
  let lastSeq = ledger.journalSeq;
  for (const entry of await journal.after(ledger.journalSeq)) {
    lastSeq = entry.seq;
    const txs = entry.transactions.filter((tx) => !NOT_EXECUTED.has(tx.state)).map((tx) => restoreValidatedTransaction(tx.wire));
    if (txs.length === 0) continue;
    // Blockhashes are not checked again: each transaction was checked when it was accepted,
    // and those that failed the check were journaled as expired.
    if (entry.kind === 'bundle') {
      ledger.executeBundle(entry.bundleId!, txs, { replay: true });
    } else {
      for (const tx of txs) ledger.execute(tx, { replay: true });
    }
    replayed += txs.length;
  }
  ledger.journalSeq = lastSeq;
  return { replayed, lastSeq };
}
