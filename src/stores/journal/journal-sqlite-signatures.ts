/**
 * Finding the SQLite journal's submissions by signature. The signature index (its own
 * file, signature-index-sqlite.ts) is written in bulk, sorted, by its own thread every
 * 200 ms: one random B-tree insert per transaction on the hot path would cost more than the
 * rest of the journal write. Until the index has them, new entries are found in memory here.
 *
 * Those entries live a fifth of a second or more: at full load, through several
 * young-generation collections, which copy what survives and then promote it. So none is
 * an object: the pairs for the index are copied byte for byte from the wire into one
 * buffer (recent-pairs.ts), and the look-up is a map of small integers (the first 30 bits
 * of the signature → sequence number), a candidate the caller checks, as it checks what
 * the index's 8-byte prefixes find.
 */
import bs58 from 'bs58';
import type { NewSubmission } from './journal';
import type { JournalStatements } from './journal-sqlite-statements';
import { PairBuffer, UnindexedSeqs, pairKey, signaturePrefix } from './recent-pairs';
import { openSignatureIndex, packIndexPairs, signatureIndexFile, type SignatureIndexWriter } from './signature-index-sqlite';

const INDEX_INTERVAL_MS = 200;

function signatureBytes(signature: string): Buffer | undefined {
  try {
    const bytes = Buffer.from(bs58.decode(signature));
    return bytes.length === 64 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

export interface JournalSignatures {
  /** Notes the signatures of a submission just written, for the index's next batch. */
  note(seq: number, submission: NewSubmission): void;
  /** The submissions that may hold this signature: a prefix can be shared, so the caller checks. */
  seqsOf(signature: string): Set<number>;
  /** Stops the index's periodic batches (the journal is closing). */
  stop(): void;
  /** Hands the index what it does not have yet, then closes it and its thread. */
  close(): Promise<void>;
}

/** Opens the index beside the journal `file`, first indexing what the journal holds beyond it (after a crash the index may lag). */
export function openJournalSignatures(file: string, statements: JournalStatements, indexWriter: SignatureIndexWriter): JournalSignatures {
  const pending = new PairBuffer();
  const unindexed = new UnindexedSeqs();
  /**
   * One batch at a time: the index records how far it holds everything (the highest
   * sequence number of a batch written), so a later batch written while an earlier one
   * failed would let start-up skip the earlier one's entries after a crash. A batch that
   * fails goes back in front of what came since and is tried again with it.
   */
  let writing: Promise<void> | null = null;
  const writeBatch = async () => {
    const pairs = pending.take();
    if (pairs === null) return;
    // The writer hands its pairs' memory to the index's thread: these are kept for after.
    const kept = pairs.slice();
    try {
      await indexWriter.add(pairs);
    } catch {
      // Still found in `unindexed`; tried again with the next batch (and start-up indexes
      // whatever the journal holds beyond the index).
      pending.putBack(kept);
      return;
    }
    unindexed.forget(kept);
  };
  const flushIndex = (): Promise<void> => {
    writing ??= writeBatch().finally(() => {
      writing = null;
    });
    return writing;
  };
  // After a crash the index may lag the journal: catch up before serving.
  const index = openSignatureIndex(signatureIndexFile(file));
  const missing = statements.selectUnindexed.all(index.indexedUpTo()) as { seq: number; wire: Buffer }[];
  index.add(packIndexPairs(missing.map((row) => ({ prefix: signaturePrefix(row.wire), seq: row.seq }))));
  // A batch that cannot even be put back (memory) is still found in `unindexed` until a
  // restart, and start-up indexes what the journal holds beyond the index: never a reason
  // for a timer's rejection to end the process.
  const indexTimer = setInterval(() => void flushIndex().catch(() => {}), INDEX_INTERVAL_MS);
  indexTimer.unref();

  return {
    note(seq, submission) {
      for (const tx of submission.transactions) {
        pending.push(tx.wire, seq);
        unindexed.add(pairKey(tx.wire, 1), seq);
      }
    },
    seqsOf(signature) {
      const bytes = signatureBytes(signature);
      const seqs = new Set<number>();
      if (bytes === undefined) return seqs;
      for (const seq of unindexed.seqsOf(pairKey(bytes, 0))) seqs.add(seq);
      for (const seq of index.lookup(bytes.readBigInt64LE(0))) seqs.add(seq);
      return seqs;
    },
    stop() {
      clearInterval(indexTimer);
    },
    async close() {
      // What a periodic batch has in flight first, then the rest.
      await writing;
      await flushIndex();
      await indexWriter.close();
      index.close();
    },
  };
}
