/**
 * Finding the SQLite journal's submissions by signature. The signature index (its own
 * file, signature-index-sqlite.ts) is written in bulk, sorted, by its own thread every
 * 200 ms: one random B-tree insert per transaction on the hot path would cost more than the
 * rest of the journal write. Until the index has them, new entries are found in memory here.
 */
import bs58 from 'bs58';
import type { NewSubmission } from './journal';
import type { JournalStatements } from './journal-sqlite-statements';
import { openSignatureIndex, packIndexPairs, signatureIndexFile, type SignatureIndexWriter } from './signature-index-sqlite';

const INDEX_INTERVAL_MS = 200;

/** The first 8 bytes of a transaction's first signature (after its count byte), as an integer key. */
function signaturePrefix(wire: Buffer): bigint {
  return wire.readBigInt64LE(1);
}

function prefixOfSignature(signature: string): bigint | undefined {
  try {
    const bytes = Buffer.from(bs58.decode(signature));
    return bytes.length === 64 ? bytes.readBigInt64LE(0) : undefined;
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
  let unindexed: { prefix: bigint; seq: number; signature: string }[] = [];
  const unindexedBySignature = new Map<string, number[]>();
  const forget = (entries: typeof unindexed) => {
    for (const entry of entries) {
      const seqs = unindexedBySignature.get(entry.signature)?.filter((seq) => seq !== entry.seq) ?? [];
      if (seqs.length === 0) unindexedBySignature.delete(entry.signature);
      else unindexedBySignature.set(entry.signature, seqs);
    }
  };
  const flushIndex = async () => {
    if (unindexed.length === 0) return;
    const entries = unindexed;
    unindexed = [];
    try {
      await indexWriter.add(packIndexPairs(entries));
    } catch {
      // Still found through `unindexedBySignature`; tried again with the next batch (and
      // start-up indexes whatever the journal holds beyond the index).
      unindexed = entries.concat(unindexed);
      return;
    }
    forget(entries);
  };
  // After a crash the index may lag the journal: catch up before serving.
  const index = openSignatureIndex(signatureIndexFile(file));
  const missing = statements.selectUnindexed.all(index.indexedUpTo()) as { seq: number; wire: Buffer }[];
  index.add(packIndexPairs(missing.map((row) => ({ prefix: signaturePrefix(row.wire), seq: row.seq }))));
  const indexTimer = setInterval(() => void flushIndex(), INDEX_INTERVAL_MS);
  indexTimer.unref();

  return {
    note(seq, submission) {
      for (const tx of submission.transactions) {
        unindexed.push({ prefix: signaturePrefix(tx.wire), seq, signature: tx.signature });
        const seqs = unindexedBySignature.get(tx.signature);
        if (seqs === undefined) unindexedBySignature.set(tx.signature, [seq]);
        else seqs.push(seq);
      }
    },
    seqsOf(signature) {
      const seqs = new Set<number>(unindexedBySignature.get(signature) ?? []);
      const prefix = prefixOfSignature(signature);
      if (prefix !== undefined) for (const seq of index.lookup(prefix)) seqs.add(seq);
      return seqs;
    },
    stop() {
      clearInterval(indexTimer);
    },
    async close() {
      await flushIndex();
      await indexWriter.close();
      index.close();
    },
  };
}
