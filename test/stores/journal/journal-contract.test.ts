/**
 * The journal's contract, run against each backend: SQLite (one gateway) and PostgreSQL
 * (a cluster). The same writes, the same reads, the same answers.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { Journal, SendEvidence } from '../../../src/stores/journal/journal';
import { createPostgresJournal } from '../../../src/stores/journal/journal-postgres';
import { createSqliteJournal } from '../../../src/stores/journal/journal-sqlite';
import { journalSubmission, withJournalFile } from '../../helpers/journal-files';
import { POSTGRES_URL, testSchema } from '../../helpers/postgres';

const evidence = (attempt: number): SendEvidence => ({
  at: 1_795_000_000_000 + attempt,
  attempt,
  route: ['engine'],
  gating: 'policy',
  slot: 100 + attempt,
  windowSlots: 8,
  leaders: ['A', 'B'],
  heldMs: attempt * 10,
  heldReason: attempt === 0 ? null : 'the leader of slot 104, C, is not trusted by the validator policy',
});

const backends: { name: string; open: () => Promise<{ journal: Journal; done: () => Promise<void> }> }[] = [
  {
    name: 'SQLite',
    open: async () => {
      let release!: () => void;
      let journal!: Journal;
      const ready = new Promise<void>((resolve) => {
        void withJournalFile(async (file) => {
          journal = createSqliteJournal(file);
          resolve();
          await new Promise<void>((r) => (release = r));
        });
      });
      await ready;
      return {
        journal,
        // Closing twice is allowed here: the test of close closes first.
        done: async () => {
          await journal.close().catch(() => {});
          release();
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const { schema, drop } = testSchema();
      const journal = await createPostgresJournal(POSTGRES_URL, schema);
      return {
        journal,
        done: async () => {
          await journal.close().catch(() => {});
          await drop();
        },
      };
    },
  },
];

for (const backend of backends) {
  describe(`the journal's contract: ${backend.name}`, () => {
    const opened: (() => Promise<void>)[] = [];
    const open = async () => {
      const { journal, done } = await backend.open();
      opened.push(done);
      return journal;
    };
    after(async () => {
      for (const done of opened) await done();
    });

    it('group-commits concurrent records with consecutive numbers, every field intact; finds by signature and bundle ID', async () => {
      const journal = await open();
      const subs = Array.from({ length: 40 }, (_, i) =>
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
              keyId: 'key_other',
              // Words that begin as a code would: kept whole, beside their own code.
              transactions: s.transactions.map((tx) => ({
                ...tx,
                state: 'rejected' as const,
                reasonCode: i % 2 === 0 ? ('engine_rejected' as const) : ('upstream_unreachable' as const),
                reason: `dropped_by_network: why ${i}`,
              })),
            }
          : s,
      );
      const seqs = await Promise.all(subs.map((s) => journal.record(s)));
      assert.deepEqual(
        seqs,
        subs.map((_, i) => seqs[0]! + i),
      );
      assert.equal(await journal.lastSeq(), seqs[seqs.length - 1]);
      const entries = await journal.after(seqs[0]! - 1);
      assert.equal(entries.length, subs.length);
      entries.forEach((entry, i) => {
        const sub = subs[i]!;
        assert.deepEqual(
          [entry.seq, entry.kind, entry.keyId, entry.antiMev, entry.bundleId, entry.routes],
          [seqs[i], sub.kind, sub.keyId, sub.antiMev, sub.bundleId, sub.routes],
        );
        assert.deepEqual(
          entry.transactions.map((tx) => [
            tx.position,
            tx.signature,
            tx.wire.toString('hex'),
            tx.state,
            tx.reasonCode,
            tx.reason,
            tx.slot,
            tx.attempts,
            tx.sends,
          ]),
          sub.transactions.map((tx, position) => [
            position,
            tx.signature,
            tx.wire.toString('hex'),
            tx.state,
            tx.reasonCode ?? null,
            tx.reason ?? null,
            null,
            0,
            [],
          ]),
        );
      });
      const member = subs[7]!.transactions[3]!.signature;
      assert.equal((await journal.find(member))[0]!.seq, seqs[7]);
      const bundle = subs.find((s) => s.kind === 'bundle')!;
      assert.equal((await journal.find(bundle.bundleId!))[0]!.kind, 'bundle');
      assert.deepEqual(await journal.find('not a signature'), []);
      assert.equal((await journal.list({ keyId: 'key_other', limit: 1000 })).length, subs.filter((s) => s.keyId === 'key_other').length);
      assert.deepEqual(
        (await journal.list({ limit: 2 })).map((e) => e.seq),
        [seqs[39], seqs[38]],
      );
      assert.ok((await journal.since(Date.now() - 60_000)).length >= subs.length);
      assert.deepEqual(await journal.since(Date.now() + 60_000), []);
    });

    it('state changes: slot and error kept, a reason (code and words) replaced when given, cleared by null and kept when absent; attempts counted; unfinished = forwarded or held', async () => {
      const journal = await open();
      const held = { ...journalSubmission('transaction', 1), antiMev: true };
      const heldSeq = await journal.record({
        ...held,
        transactions: held.transactions.map((tx) => ({
          ...tx,
          state: 'held' as const,
          reasonCode: 'held_by_policy' as const,
          reason: 'not trusted',
        })),
      });
      const batchSeq = await journal.record(journalSubmission('batch', 3));
      assert.deepEqual(
        (await journal.unfinished()).map((e) => e.seq).filter((s) => s === heldSeq || s === batchSeq),
        [heldSeq, batchSeq],
      );

      await Promise.all([
        journal.update([
          { seq: batchSeq, position: 0, state: 'landed', slot: 77 },
          {
            seq: batchSeq,
            position: 1,
            state: 'failed',
            slot: 78,
            reasonCode: 'failed_on_chain',
            reason: 'custom program error: 0x1',
            error: { InstructionError: [0, { Custom: 1 }] },
          },
        ]),
        journal.countAttempts([
          { seq: batchSeq, position: 2 },
          { seq: batchSeq, position: 2 },
        ]),
      ]);
      await journal.update([
        { seq: batchSeq, position: 1, state: 'failed' },
        { seq: batchSeq, position: 2, state: 'expired', reasonCode: 'not_landed_unknown', reason: 'not landed after 3 sends' },
      ]);
      await journal.update([
        { seq: batchSeq, position: 2, state: 'expired', reasonCode: 'blockhash_expired', reason: 'its blockhash expired' },
      ]);
      const stillHeld = (await journal.after(heldSeq - 1)).find((e) => e.seq === heldSeq)!.transactions[0]!;
      assert.deepEqual([stillHeld.state, stillHeld.reasonCode, stillHeld.reason], ['held', 'held_by_policy', 'not trusted']);
      await journal.update([{ seq: heldSeq, position: 0, state: 'forwarded', reasonCode: null, reason: null }]);
      const [batch] = await journal.find((await journal.after(batchSeq - 1)).find((e) => e.seq === batchSeq)!.transactions[0]!.signature);
      assert.deepEqual(
        batch!.transactions.map((tx) => [tx.state, tx.slot, tx.reasonCode, tx.reason, tx.error, tx.attempts]),
        [
          ['landed', 77, null, null, null, 0],
          ['failed', 78, 'failed_on_chain', 'custom program error: 0x1', { InstructionError: [0, { Custom: 1 }] }, 0],
          ['expired', null, 'blockhash_expired', 'its blockhash expired', null, 2],
        ],
      );
      assert.ok(batch!.updatedAt >= batch!.createdAt);
      const released = (await journal.after(heldSeq - 1)).find((e) => e.seq === heldSeq)!;
      assert.deepEqual(
        [released.transactions[0]!.state, released.transactions[0]!.reasonCode, released.transactions[0]!.reason],
        ['forwarded', null, null],
      );
    });

    it('landing times: kept once set, never cleared by a later change; read back by landingGroups, of one key or all, since a time', async () => {
      const journal = await open();
      const keyId = `key_${crypto.randomBytes(4).toString('hex')}`;
      const before = Date.now();
      const seq = await journal.record({ ...journalSubmission('batch', 3), keyId, routes: ['rpc-a', 'rpc-b'] });
      const createdAt = (await journal.after(seq - 1)).find((e) => e.seq === seq)!.createdAt;
      await journal.update([
        { seq, position: 0, state: 'landed', slot: 90, landedAt: createdAt + 420, slotsToLand: 2 },
        {
          seq,
          position: 1,
          state: 'failed',
          slot: 91,
          reasonCode: 'failed_on_chain',
          reason: 'x',
          landedAt: createdAt + 800,
          slotsToLand: null,
        },
      ]);
      // A later change that says nothing of the times keeps them.
      await journal.update([{ seq, position: 0, state: 'landed' }]);
      const entry = (await journal.after(seq - 1)).find((e) => e.seq === seq)!;
      assert.deepEqual(
        entry.transactions.map((tx) => [tx.state, tx.landedAt, tx.slotsToLand]),
        [
          ['landed', createdAt + 420, 2],
          ['failed', createdAt + 800, null],
          ['forwarded', null, null],
        ],
      );
      // A second batch with one landing like the first one's, and a bundle whose members land together.
      const second = await journal.record({ ...journalSubmission('batch', 3), keyId, routes: ['rpc-a', 'rpc-b'] });
      const bundle = await journal.record({
        ...journalSubmission('bundle', 2, { bundleId: crypto.randomBytes(32).toString('hex') }),
        keyId,
      });
      const createdOf = async (s: number) => (await journal.after(s - 1)).find((e) => e.seq === s)!.createdAt;
      const [secondAt, bundleAt] = [await createdOf(second), await createdOf(bundle)];
      await journal.update([
        { seq: second, position: 0, state: 'landed', slot: 90, landedAt: secondAt + 420, slotsToLand: 2 },
        { seq: bundle, position: 0, state: 'landed', slot: 95, landedAt: bundleAt + 1000, slotsToLand: 4 },
        { seq: bundle, position: 1, state: 'landed', slot: 95, landedAt: bundleAt + 1000, slotsToLand: 4 },
      ]);
      const groups = (await journal.landingGroups({ sinceMs: before - 1, keyId }))
        .map((g) => [g.kind, g.keyId, g.route, g.state, g.msToLand, g.slotsToLand, g.transactions, g.submissions])
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      const route = 'rpc-a+rpc-b';
      assert.deepEqual(groups, [
        ['batch', keyId, route, 'failed', 800, null, 1, 1],
        ['batch', keyId, route, 'forwarded', null, null, 3, 2],
        ['batch', keyId, route, 'landed', 420, 2, 2, 2],
        ['bundle', keyId, 'embedded', 'landed', 1000, 4, 2, 1],
      ]);
      assert.deepEqual(await journal.landingGroups({ sinceMs: Date.now() + 60_000, keyId }), []);
      assert.deepEqual(await journal.landingGroups({ sinceMs: before - 1, keyId: 'someone else' }), []);
      const everyKey = (await journal.landingGroups({ sinceMs: before - 1 })).filter((g) => g.keyId === keyId);
      assert.equal(
        everyKey.reduce((n, g) => n + g.transactions, 0),
        8,
      );
    });

    it('outcomes: each transaction of the submissions since a time with its wire, state, slot and slots to land, newest first, at most the limit', async () => {
      const journal = await open();
      const keyId = `key_${crypto.randomBytes(4).toString('hex')}`;
      const before = Date.now();
      const first = await journal.record({ ...journalSubmission('batch', 2), keyId, routes: ['rpc-a', 'jito'] });
      const second = await journal.record({ ...journalSubmission('transaction', 1), keyId });
      const recorded = (await journal.after(first - 1)).filter((e) => e.seq === first || e.seq === second);
      await journal.update([{ seq: first, position: 1, state: 'landed', slot: 7_000_000_000, slotsToLand: 3 }]);
      const mine = (await journal.outcomes({ sinceMs: before - 1, limit: 100 })).filter((o) => o.keyId === keyId);
      assert.deepEqual(
        mine.map((o) => [o.seq, o.position, o.kind, o.route, o.state, o.slot, o.slotsToLand]),
        [
          [second, 0, 'transaction', 'embedded', 'forwarded', null, null],
          [first, 0, 'batch', 'rpc-a+jito', 'forwarded', null, null],
          [first, 1, 'batch', 'rpc-a+jito', 'landed', 7_000_000_000, 3],
        ],
      );
      const wires = recorded.flatMap((e) => e.transactions.map((tx) => tx.wire.toString('hex')));
      assert.deepEqual(mine.map((o) => o.wire.toString('hex')).sort(), wires.sort());
      assert.ok(mine.every((o) => Buffer.isBuffer(o.wire) && o.createdAt >= before - 1));
      assert.deepEqual(mine.map((o) => o.signature).sort(), recorded.flatMap((e) => e.transactions.map((tx) => tx.signature)).sort());
      assert.equal((await journal.outcomes({ sinceMs: before - 1, limit: 1 })).length, 1);
      assert.deepEqual(await journal.outcomes({ sinceMs: Date.now() + 60_000, limit: 100 }), []);
    });

    it('protected sends: the first with its submission, the later ones recorded, all read back in order', async () => {
      const journal = await open();
      const sub = { ...journalSubmission('transaction', 1), antiMev: true };
      const seq = await journal.record({ ...sub, transactions: sub.transactions.map((tx) => ({ ...tx, send: evidence(0) })) });
      await journal.recordSends([
        { seq, position: 0, send: evidence(1) },
        { seq, position: 0, send: evidence(2) },
      ]);
      const [entry] = await journal.find(sub.transactions[0]!.signature);
      assert.deepEqual(entry!.transactions[0]!.sends, [evidence(0), evidence(1), evidence(2)]);
    });

    it('close commits what was written in its turn', async () => {
      const { journal, done } = await backend.open();
      const sub = journalSubmission('transaction', 1);
      const recorded = journal.record(sub);
      await journal.close();
      const seq = await recorded;
      assert.equal(typeof seq, 'number');
      opened.push(done);
    });
  });
}
