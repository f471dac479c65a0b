import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FRAME_HEADER_BYTES, openJournalLog, readLog } from '../../../src/stores/journal/journal-log';
import { BatchEncoder, decodeBatch } from '../../../src/stores/journal/journal-log-codec';
import type { WriteBatch } from '../../../src/stores/journal/journal-sqlite-schema';
import { createSqliteJournal } from '../../../src/stores/journal/journal-sqlite';
import { journalSubmission, withJournalFile } from '../../helpers/journal-files';

/** Copies the journal's files as they are on disk now, as a kill -9 would leave them. */
function crashCopy(dir: string, file: string, to: string): string {
  fs.mkdirSync(to, { recursive: true });
  for (const name of fs.readdirSync(dir))
    if (name.startsWith(path.basename(file))) fs.copyFileSync(path.join(dir, name), path.join(to, name));
  return path.join(to, path.basename(file));
}

describe('journal log', () => {
  it('encodes and decodes every field of a group of writes', () => {
    const batch: WriteBatch = {
      now: 1_795_000_000_123,
      records: [
        { seq: 7, submission: journalSubmission('transaction', 1) },
        {
          seq: 2 ** 40,
          submission: journalSubmission('bundle', 3, {
            keyId: 'clé_ünïcode',
            antiMev: true,
            bundleId: 'f'.repeat(64),
            routes: ['jito', 'rpc'],
          }),
        },
        {
          seq: 9,
          submission: {
            ...journalSubmission('batch', 2, { routes: [] }),
            transactions: [
              {
                signature: 'a',
                wire: Buffer.alloc(0),
                state: 'rejected',
                reasonCode: 'upstream_unreachable',
                reason: 'no upstream took it — try again',
              },
              { signature: 'b', wire: Buffer.from([1, 2, 3]), state: 'expired' },
              {
                signature: 'c',
                wire: Buffer.from([4]),
                state: 'held',
                reasonCode: 'held_by_policy',
                reason: 'the leader of slot 104 is not trusted',
              },
            ],
          },
        },
      ],
      changes: [{ seq: 7, position: 0, state: 'failed', slot: 12, error: { InstructionError: [0, { Custom: 1 }] } }],
      attempts: [{ seq: 9, position: 1 }],
      sends: [
        {
          seq: 9,
          position: 2,
          send: {
            at: 1_795_000_000_456,
            attempt: 0,
            route: ['jito'],
            gating: 'policy',
            slot: 100,
            windowSlots: 8,
            leaders: ['A', 'B'],
            heldMs: 333,
            heldReason: 'the leader of slot 104 is not trusted',
          },
        },
      ],
    };
    const encoder = new BatchEncoder();
    const frame = encoder.encode(batch, FRAME_HEADER_BYTES);
    assert.deepEqual(decodeBatch(Buffer.from(frame.subarray(FRAME_HEADER_BYTES))), batch);
    const small = encoder.encode({ now: 1, records: [], changes: [], attempts: [], sends: [] }, FRAME_HEADER_BYTES);
    assert.deepEqual(decodeBatch(small.subarray(FRAME_HEADER_BYTES)), { now: 1, records: [], changes: [], attempts: [], sends: [] });
    // A group larger than the encoder's buffer makes it grow.
    const large: WriteBatch = {
      now: 2,
      records: Array.from({ length: 200 }, (_, i) => ({ seq: i + 1, submission: journalSubmission('batch', 5) })),
      changes: [],
      attempts: [],
      sends: [],
    };
    assert.deepEqual(decodeBatch(Buffer.from(encoder.encode(large, FRAME_HEADER_BYTES).subarray(FRAME_HEADER_BYTES))), large);
    const encoded = Buffer.from(encoder.encode(batch, FRAME_HEADER_BYTES).subarray(FRAME_HEADER_BYTES));
    assert.throws(() => decodeBatch(encoded.subarray(0, encoded.length - 3)), /ends early/);
    assert.throws(() => decodeBatch(Buffer.concat([encoded, Buffer.from([0])])), /bytes after/);
  });

  it('state changes with landing times go through the journal log, and a change without them (an older log) still decodes', () => {
    const encoder = new BatchEncoder();
    const batch = {
      now: 1,
      records: [],
      changes: [
        { seq: 1, position: 0, state: 'landed' as const, slot: 5, landedAt: 1_800_000_000_000, slotsToLand: 3 },
        { seq: 2, position: 0, state: 'landed' as const, slot: 6 },
      ],
      attempts: [],
      sends: [],
    };
    const decoded = decodeBatch(Buffer.from(encoder.encode(batch, 0)));
    assert.deepEqual(decoded.changes, batch.changes);
  });

  it('reads back frames in order across files, and stops a file at a torn or corrupt frame', async () => {
    await withJournalFile(async (file) => {
      const log = openJournalLog(file, 1, 'NORMAL');
      const payload = (text: string) => Buffer.concat([Buffer.alloc(FRAME_HEADER_BYTES), Buffer.from(text)]);
      const first = log.append(payload('one'));
      log.append(payload('two'));
      log.rotate();
      log.append(payload('three'));
      log.close();
      const texts = (from = { file: 0, offset: 0 }) => [...readLog(file, from)].map((f) => f.payload.toString());
      assert.deepEqual(texts(), ['one', 'two', 'three']);
      assert.deepEqual(texts(first), ['two', 'three'], 'from a position: what follows it');
      // A frame cut short at the end of file 2, and a flipped byte in file 1's second frame.
      fs.appendFileSync(`${file}-log.2`, Buffer.from([40, 0, 0, 0, 1, 2, 3]));
      assert.deepEqual(texts(), ['one', 'two', 'three']);
      const bytes = fs.readFileSync(`${file}-log.1`);
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
      fs.writeFileSync(`${file}-log.1`, bytes);
      assert.deepEqual(texts(), ['one', 'three']);
    });
  });

  it('after a crash before SQLite had them, start-up applies the logged writes, ignores a torn tail, and numbering goes on', async () => {
    await withJournalFile(async (file, dir) => {
      const journal = createSqliteJournal(file);
      const subs = [
        journalSubmission('transaction', 1),
        journalSubmission('batch', 3),
        journalSubmission('bundle', 2, { bundleId: 'b'.repeat(64) }),
      ];
      const seqs = await Promise.all(subs.map((s) => journal.record(s)));
      await journal.update([{ seq: seqs[1]!, position: 2, state: 'landed', slot: 5 }]);
      await journal.countAttempts([{ seq: seqs[0]!, position: 0 }]);
      // Copied in the same turn as the last answer: the SQLite tables have none of it yet.
      const copy = crashCopy(dir, file, path.join(dir, 'crashed'));
      const logs = fs.readdirSync(path.dirname(copy)).filter((name) => name.includes('-log.'));
      assert.equal(logs.length, 1);
      fs.appendFileSync(path.join(path.dirname(copy), logs[0]!), crypto.randomBytes(30));
      await journal.close();

      const reopened = createSqliteJournal(copy);
      const entries = await reopened.after(0);
      assert.deepEqual(
        entries.map((e) => e.seq),
        seqs,
      );
      assert.deepEqual(
        entries.map((e) => e.transactions.map((tx) => tx.signature)),
        subs.map((s) => s.transactions.map((tx) => tx.signature)),
      );
      assert.ok(entries[1]!.transactions[2]!.wire.equals(subs[1]!.transactions[2]!.wire));
      assert.equal(entries[1]!.transactions[2]!.state, 'landed');
      assert.equal(entries[1]!.transactions[2]!.slot, 5);
      assert.equal(entries[0]!.transactions[0]!.attempts, 1);
      assert.equal(entries[2]!.bundleId, 'b'.repeat(64));
      assert.equal((await reopened.find(subs[2]!.transactions[1]!.signature))[0]!.seq, seqs[2]);
      assert.equal(await reopened.record(journalSubmission('transaction', 1)), 4);
      await reopened.close();
      const files = fs.readdirSync(path.dirname(copy)).filter((name) => name.includes('-log.'));
      assert.equal(files.length, 1, `only the newest log file is kept (${files.join(', ')})`);
    });
  });

  it('a reader beside a running writer sees every answered write, and the writer does not apply them twice', async () => {
    await withJournalFile(async (file) => {
      const writer = createSqliteJournal(file);
      const seq = await writer.record(journalSubmission('transaction', 1));
      await writer.countAttempts([{ seq, position: 0 }]);
      const reader = createSqliteJournal(file, { reader: true });
      const seen = await reader.after(0);
      assert.equal(seen.length, 1, 'applied from the log by the reader');
      assert.equal(seen[0]!.transactions[0]!.attempts, 1);
      await assert.rejects(reader.record(journalSubmission('transaction', 1)), /reader/);
      // The writer now applies its own frames, which the reader already applied.
      const [entry] = await writer.after(0);
      assert.equal(entry!.transactions[0]!.attempts, 1, 'an attempt counted once');
      await writer.countAttempts([{ seq, position: 0 }]);
      assert.equal((await reader.after(0))[0]!.transactions[0]!.attempts, 2);
      await reader.close();
      await writer.close();
    });
  });

  it('starts new log files as they grow, deletes the applied ones, and loses nothing', async () => {
    await withJournalFile(async (file, dir) => {
      const journal = createSqliteJournal(file, { logRotateBytes: 4096 });
      const signatures: string[] = [];
      for (let round = 0; round < 20; round++) {
        const subs = Array.from({ length: 5 }, () => journalSubmission('transaction', 1));
        await Promise.all(subs.map((s) => journal.record(s)));
        signatures.push(...subs.map((s) => s.transactions[0]!.signature));
        await journal.lastSeq(); // a read applies what the log holds, and may start a new file
      }
      const files = fs.readdirSync(dir).filter((name) => name.includes('-log.'));
      assert.equal(files.length, 1, `applied files are deleted (${files.join(', ')})`);
      assert.ok(Number(files[0]!.split('.').at(-1)) > 5, `a new file was started several times (${files[0]})`);
      await journal.close();
      const reopened = createSqliteJournal(file);
      assert.deepEqual(
        (await reopened.after(0)).map((e) => e.transactions[0]!.signature),
        signatures,
      );
      await reopened.close();
    });
  });
});
