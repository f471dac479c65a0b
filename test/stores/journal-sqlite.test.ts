import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import type { NewSubmission } from '../../src/stores/journal';
import { createSqliteJournal } from '../../src/stores/journal-sqlite';
import { makeDataDir } from '../helpers/gateway';

/** A wire-like blob whose first signature is `signature` (the journal reads bytes 1..65). */
function submission(kind: NewSubmission['kind'], count: number, bundleId: string | null = null): NewSubmission {
  return {
    kind,
    keyId: 'key_test',
    antiMev: false,
    bundleId,
    routes: ['embedded'],
    transactions: Array.from({ length: count }, () => {
      const wire = Buffer.concat([Buffer.from([1]), crypto.randomBytes(64), crypto.randomBytes(40)]);
      return { signature: bs58.encode(wire.subarray(1, 65)), wire, state: 'forwarded' as const };
    }),
  };
}

describe('SQLite journal', () => {
  it('group-commits concurrent records, finds them by signature and bundle ID before and after indexing and across a reopen', async () => {
    const dir = makeDataDir();
    const file = path.join(dir, 'journal.sqlite');
    try {
      const journal = createSqliteJournal(file);
      const subs = [submission('transaction', 1), submission('batch', 3), submission('bundle', 2, 'b'.repeat(64))];
      const seqs = await Promise.all(subs.map((s) => journal.record(s)));
      assert.deepEqual(seqs, [1, 2, 3]);
      const batchMember = subs[1]!.transactions[2]!.signature;
      assert.equal((await journal.find(batchMember))[0]!.seq, 2, 'found before the index is written');
      assert.equal((await journal.find('b'.repeat(64)))[0]!.kind, 'bundle');
      await journal.update([{ seq: 2, position: 2, state: 'landed', slot: 77 }]);
      assert.equal((await journal.find(batchMember))[0]!.transactions[2]!.slot, 77);
      assert.deepEqual(await journal.find(bs58.encode(crypto.randomBytes(64))), []);
      assert.deepEqual(await journal.find('not base58!'), []);
      // Simulate a crash before the index was written: reopen from the file alone.
      const copy = path.join(dir, 'copy.sqlite');
      fs.copyFileSync(file, copy);
      if (fs.existsSync(`${file}-wal`)) fs.copyFileSync(`${file}-wal`, `${copy}-wal`);
      const reopened = createSqliteJournal(copy);
      assert.equal((await reopened.find(subs[0]!.transactions[0]!.signature))[0]!.seq, 1, 'start-up indexes what was not');
      assert.equal((await reopened.find(batchMember))[0]!.seq, 2);
      assert.equal((await reopened.unfinished()).length, 3);
      await reopened.close();
      await journal.close();
      const again = createSqliteJournal(file);
      assert.equal((await again.find(batchMember)).length, 1, 'found through the index after a clean close');
      await again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
