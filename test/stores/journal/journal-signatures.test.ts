import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openJournalSignatures } from '../../../src/stores/journal/journal-sqlite-signatures';
import { MIGRATIONS } from '../../../src/stores/journal/journal-sqlite-schema';
import { prepareJournalStatements } from '../../../src/stores/journal/journal-sqlite-statements';
import type { IndexPairs, SignatureIndexWriter } from '../../../src/stores/journal/signature-index-sqlite';
import { openSqlite } from '../../../src/stores/database/sqlite-database';
import { journalSubmission, withJournalFile } from '../../helpers/journal-files';

/** An index writer whose batches wait for the test to settle them. */
function heldWriter() {
  const batches: { seqs: number[]; settle: (ok: boolean) => void }[] = [];
  const writer: SignatureIndexWriter = {
    add: (pairs: IndexPairs) =>
      new Promise<void>((resolve, reject) => {
        // The pairs' sequence numbers (every second entry), as the index's thread would get them.
        const seqs = Array.from({ length: pairs.length / 2 }, (_, i) => Number(pairs[2 * i + 1]));
        batches.push({ seqs, settle: (ok) => (ok ? resolve() : reject(new Error('the index is full'))) });
      }),
    close: async () => {},
  };
  return { writer, batches };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 260)); // past one 200 ms batch interval

describe("the SQLite journal's signature look-up before the index has the entries", () => {
  it('writes one batch at a time, puts a failed one back in front, and finds every entry throughout', async () => {
    await withJournalFile(async (file) => {
      const db = openSqlite(path.join(path.dirname(file), 'journal.sqlite'), MIGRATIONS);
      const { writer, batches } = heldWriter();
      const signatures = openJournalSignatures(file, prepareJournalStatements(db), writer);
      const subs = [1, 2, 3, 4].map(() => journalSubmission('transaction', 1));
      const found = (i: number) => signatures.seqsOf(subs[i]!.transactions[0]!.signature).has(i + 1);
      try {
        signatures.note(1, subs[0]!);
        signatures.note(2, subs[1]!);
        await tick();
        assert.deepEqual(
          batches.map((b) => b.seqs),
          [[1, 2]],
        );
        signatures.note(3, subs[2]!);
        await tick();
        assert.equal(batches.length, 1, 'no second batch while the first is in flight');
        batches[0]!.settle(false);
        signatures.note(4, subs[3]!);
        await tick();
        assert.deepEqual(batches[1]!.seqs, [1, 2, 3, 4], 'the failed batch first, then what came since, in sequence order');
        assert.ok([0, 1, 2, 3].every(found), 'found in memory while the index lacks them');
        batches[1]!.settle(true);
        await tick();
        assert.ok(![0, 1, 2, 3].some(found), 'forgotten once written (the index, here a stand-in, holds them)');
      } finally {
        signatures.stop();
        for (const batch of batches) batch.settle(true);
        await signatures.close();
        db.close();
      }
    });
  });
});
