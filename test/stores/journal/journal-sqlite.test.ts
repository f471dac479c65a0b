import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from '../../../src/stores/database/sqlite-binding';
import bs58 from 'bs58';
import { walRestartsTotal } from '../../../src/metrics/metrics';
import { createSqliteJournal } from '../../../src/stores/journal/journal-sqlite';
import { journalSubmission, withJournalFile } from '../../helpers/journal-files';

describe('SQLite journal', () => {
  it('group-commits concurrent records, finds them by signature and bundle ID before and after indexing and across a reopen', async () => {
    await withJournalFile(async (file, dir) => {
      const journal = createSqliteJournal(file);
      const subs = [
        journalSubmission('transaction', 1),
        journalSubmission('batch', 3),
        journalSubmission('bundle', 2, { bundleId: 'b'.repeat(64) }),
      ];
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
    });
  });

  it('writes a large group in one commit (many rows per INSERT, in chunks) with every field intact', async () => {
    await withJournalFile(async (file) => {
      const journal = createSqliteJournal(file);
      // 70 submissions, 110 transactions, in one turn: more rows than one INSERT takes.
      const subs = Array.from({ length: 70 }, (_, i) =>
        i % 7 === 0
          ? journalSubmission('batch', 5)
          : i % 11 === 0
            ? journalSubmission('bundle', 2, { bundleId: crypto.randomBytes(32).toString('hex') })
            : journalSubmission('transaction', 1),
      ).map((s, i) =>
        i % 3 === 0
          ? {
              ...s,
              antiMev: true,
              transactions: s.transactions.map((tx) => ({
                ...tx,
                state: 'rejected' as const,
                reasonCode: 'dropped_by_network' as const,
                reason: `why ${i}`,
              })),
            }
          : s,
      );
      const seqs = await Promise.all(subs.map((s) => journal.record(s)));
      assert.deepEqual(
        seqs,
        subs.map((_, i) => i + 1),
      );
      const entries = await journal.after(0);
      assert.equal(entries.length, subs.length);
      entries.forEach((entry, i) => {
        const sub = subs[i]!;
        assert.equal(entry.seq, i + 1);
        assert.deepEqual(
          [entry.kind, entry.keyId, entry.antiMev, entry.bundleId, entry.routes],
          [sub.kind, sub.keyId, sub.antiMev, sub.bundleId, sub.routes],
        );
        assert.deepEqual(
          entry.transactions.map((tx) => [tx.position, tx.signature, tx.wire.toString('hex'), tx.state, tx.reasonCode, tx.reason]),
          sub.transactions.map((tx, position) => [
            position,
            tx.signature,
            tx.wire.toString('hex'),
            tx.state,
            tx.reasonCode ?? null,
            tx.reason ?? null,
          ]),
          `submission ${i + 1}`,
        );
      });
      await journal.close();
    });
  });

  it('migrates a version-1 journal (AUTOINCREMENT, signature index inside) keeping every row, and finds rows created since a time', async () => {
    await withJournalFile(async (file) => {
      // Version 1, as the first release wrote it.
      const old = new Database(file);
      old.pragma('journal_mode = WAL');
      old.exec(`CREATE TABLE submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, key_id TEXT NOT NULL, anti_mev INTEGER NOT NULL,
          bundle_id TEXT, routes TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
        CREATE TABLE submission_transactions (seq INTEGER NOT NULL REFERENCES submissions(seq), position INTEGER NOT NULL, signature TEXT NOT NULL,
          wire BLOB NOT NULL, state TEXT NOT NULL, slot INTEGER, reason TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (seq, position));
        CREATE INDEX submissions_created_at ON submissions(created_at);
        CREATE INDEX submissions_bundle_id ON submissions(bundle_id) WHERE bundle_id IS NOT NULL;
        CREATE TABLE signature_index (prefix INTEGER NOT NULL, seq INTEGER NOT NULL);
        CREATE INDEX signature_index_prefix ON signature_index(prefix);
        CREATE INDEX submission_transactions_unfinished ON submission_transactions(seq) WHERE state = 'forwarded';
        PRAGMA user_version = 1;`);
      const olds = [journalSubmission('transaction', 1), journalSubmission('batch', 2), journalSubmission('transaction', 1)];
      olds.forEach((sub, i) => {
        const seq = Number(
          old
            .prepare(
              'INSERT INTO submissions (kind, key_id, anti_mev, bundle_id, routes, created_at, updated_at) VALUES (?, ?, 0, NULL, ?, ?, ?)',
            )
            .run(sub.kind, sub.keyId, 'embedded', 1_000 * (i + 1), 1_000 * (i + 1)).lastInsertRowid,
        );
        sub.transactions.forEach((tx, position) =>
          old
            .prepare('INSERT INTO submission_transactions (seq, position, signature, wire, state) VALUES (?, ?, ?, ?, ?)')
            .run(seq, position, tx.signature, tx.wire, tx.state),
        );
      });
      old.close();

      const journal = createSqliteJournal(file);
      assert.equal((await journal.find(olds[1]!.transactions[1]!.signature))[0]!.seq, 2, 'old rows are indexed in the new index file');
      assert.deepEqual(
        (await journal.since(2_000)).map((e) => e.seq),
        [2, 3],
      );
      assert.deepEqual(
        (await journal.since(2_001)).map((e) => e.seq),
        [3],
      );
      assert.deepEqual(
        (await journal.since(0)).map((e) => e.seq),
        [1, 2, 3],
      );
      // Rows from before the landing times have none (null), and the report reads them as such.
      assert.ok((await journal.since(0)).every((e) => e.transactions.every((tx) => tx.landedAt === null && tx.slotsToLand === null)));
      const groups = await journal.landingGroups({ sinceMs: 0 });
      assert.ok(groups.every((g) => g.msToLand === null && g.slotsToLand === null));
      assert.equal(
        groups.reduce((n, g) => n + g.transactions, 0),
        4,
      );
      assert.deepEqual(await journal.since(Date.now() + 60_000), []);
      assert.equal(await journal.record(journalSubmission('transaction', 1)), 4, 'sequence numbers continue after the migration');
      const recent = await journal.since(Date.now() - 60_000);
      assert.deepEqual(
        recent.map((e) => e.seq),
        [4],
      );
      await journal.close();
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('user_version', { simple: true }), 6);
      assert.equal((db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'signature_index'").get() as { n: number }).n, 0);
      db.close();
    });
  });

  it('keeps its WAL file from growing without bound under continuous writes, losing no commit while it restarts', async () => {
    await withJournalFile(async (file) => {
      const restarts = async () => (await walRestartsTotal.get()).values[0]?.value ?? 0;
      const before = await restarts();
      const journal = createSqliteJournal(file, { walRestartBytes: 256 * 1024 });
      let written = 0;
      let largest = 0;
      let shrank = false;
      const deadline = Date.now() + 20_000;
      // A writer that never pauses (a commit every turn of the event loop), until the file
      // has been seen to shrink (after about a second, more on a loaded machine).
      while (!shrank && Date.now() < deadline) {
        await Promise.all(Array.from({ length: 8 }, () => journal.record(journalSubmission('transaction', 1))));
        written += 8;
        const size = fs.statSync(`${file}-wal`).size;
        if (size < largest) shrank = true;
        largest = Math.max(largest, size);
      }
      assert.ok(shrank, `the WAL file shrank while commits went on (${largest} B at most)`);
      assert.equal((await journal.after(0)).length, written, 'every recorded submission is there');
      // Counted when the checkpointer reports back (later than the writer's release if it
      // took longer than the writer's limit on a loaded machine).
      for (let i = 0; i < 100 && (await restarts()) === before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok((await restarts()) > before, 'counted in the metric');
      await journal.close();
    });
  });
});
