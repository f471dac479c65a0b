/**
 * The outcome reason's code kept apart from its words: in a column of its own in SQLite and
 * PostgreSQL, and a field of its own in the journal log. Journals written before it was
 * (the code inside the reason as `code: words`, or words alone from before the codes) are
 * migrated, replayed and read back with the same codes and words as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import Database from '../../../src/stores/database/sqlite-binding';
import {
  TRANSACTION_STATES,
  type Journal,
  type JournalEntry,
  type NewSubmission,
  type TransactionState,
} from '../../../src/stores/journal/journal';
import { FRAME_HEADER_BYTES, openJournalLog } from '../../../src/stores/journal/journal-log';
import { createPostgresJournal } from '../../../src/stores/journal/journal-postgres';
import { createSqliteJournal } from '../../../src/stores/journal/journal-sqlite';
import { journalSubmission, withJournalFile } from '../../helpers/journal-files';
import { POSTGRES_URL, testSchema } from '../../helpers/postgres';

/** Reasons as the journal kept them before the code had a column: each transaction's state and reason column, and how it reads. */
const LEGACY: readonly { state: TransactionState; raw: string | null; code: string | null; words: string | null }[] = [
  {
    state: 'rejected',
    raw: 'upstream_unreachable: no upstream took it: rpc: connection refused',
    code: 'upstream_unreachable',
    words: 'no upstream took it: rpc: connection refused',
  },
  { state: 'failed', raw: null, code: 'failed_on_chain', words: null },
  {
    state: 'expired',
    raw: 'held_by_policy: held by anti-MEV protection and never sent (not trusted); its blockhash expired before a safe window opened',
    code: 'held_by_policy',
    words: 'held by anti-MEV protection and never sent (not trusted); its blockhash expired before a safe window opened',
  },
  // From before the codes: read by their words.
  {
    state: 'rejected',
    raw: 'the network dropped it: the fee payer cannot pay',
    code: 'dropped_by_network',
    words: 'the network dropped it: the fee payer cannot pay',
  },
  { state: 'held', raw: 'the leader of slot 104 is not trusted', code: 'held_by_policy', words: 'the leader of slot 104 is not trusted' },
];

/** A batch of LEGACY.length transactions, as the old rows and frames hold them. */
const legacyBatch = (): NewSubmission => journalSubmission('batch', LEGACY.length);

const reasons = (entry: JournalEntry) => entry.transactions.map((tx) => [tx.state, tx.reasonCode, tx.reason]);
const LEGACY_READ = LEGACY.map((l) => [l.state, l.code, l.words]);

/**
 * After reading the legacy rows: a new reason on a legacy row replaces code and words, and a
 * new submission's code and words come back apart, though its words look like `code: words`.
 */
async function writeOverLegacy(journal: Journal, seq: number): Promise<void> {
  await journal.update([
    { seq, position: 4, state: 'expired', reasonCode: 'held_by_policy', reason: 'never sent' },
    { seq, position: 0, state: 'rejected' }, // no reason: the legacy one stays, read as before
  ]);
  const updated = (await journal.after(seq - 1))[0]!;
  assert.deepEqual(reasons(updated), [...LEGACY_READ.slice(0, 4), ['expired', 'held_by_policy', 'never sent']]);
  const fresh = journalSubmission('transaction', 1);
  const newSeq = await journal.record({
    ...fresh,
    transactions: [{ ...fresh.transactions[0]!, state: 'rejected', reasonCode: 'engine_rejected', reason: 'upstream_unreachable: words' }],
  });
  const entry = (await journal.after(newSeq - 1)).find((e) => e.seq === newSeq)!;
  assert.deepEqual(reasons(entry), [['rejected', 'engine_rejected', 'upstream_unreachable: words']]);
}

/** The reason columns of the rows of `seq`, as stored. */
const stored = (placeholder: string) =>
  `SELECT reason_code, reason FROM submission_transactions WHERE seq = ${placeholder} ORDER BY position`;

describe('outcome reasons journaled as a code and words apart', () => {
  it('SQLite: a journal of the schema before reason_code is migrated; its rows read as before, new ones keep the code in its column', async () => {
    await withJournalFile(async (file) => {
      const old = new Database(file);
      old.pragma('journal_mode = WAL');
      // Version 5, the last schema without the column.
      old.exec(`CREATE TABLE submissions (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, key_id TEXT NOT NULL, anti_mev INTEGER NOT NULL,
          bundle_id TEXT, routes TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
        CREATE INDEX submissions_bundle_id ON submissions(bundle_id) WHERE bundle_id IS NOT NULL;
        CREATE TABLE submission_transactions (seq INTEGER NOT NULL REFERENCES submissions(seq), position INTEGER NOT NULL, signature TEXT NOT NULL,
          wire BLOB NOT NULL, state TEXT NOT NULL, slot INTEGER, reason TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0,
          landed_at INTEGER, slots_to_land INTEGER, PRIMARY KEY (seq, position));
        CREATE INDEX submission_transactions_unfinished ON submission_transactions(seq) WHERE state IN ('forwarded', 'held');
        CREATE TABLE journal_log_position (id INTEGER PRIMARY KEY CHECK (id = 1), file INTEGER NOT NULL, offset INTEGER NOT NULL);
        INSERT INTO journal_log_position (id, file, offset) VALUES (1, 0, 0);
        CREATE TABLE protected_sends (seq INTEGER NOT NULL, position INTEGER NOT NULL, evidence TEXT NOT NULL);
        CREATE INDEX protected_sends_seq ON protected_sends(seq);
        PRAGMA user_version = 5;`);
      const batch = legacyBatch();
      old.prepare("INSERT INTO submissions VALUES (1, 'batch', ?, 1, NULL, 'rpc', 1000, 1000)").run(batch.keyId);
      batch.transactions.forEach((tx, position) =>
        old
          .prepare('INSERT INTO submission_transactions (seq, position, signature, wire, state, reason) VALUES (1, ?, ?, ?, ?, ?)')
          .run(position, tx.signature, tx.wire, LEGACY[position]!.state, LEGACY[position]!.raw),
      );
      old.close();

      const journal = createSqliteJournal(file);
      assert.deepEqual(reasons((await journal.after(0))[0]!), LEGACY_READ);
      await writeOverLegacy(journal, 1);
      await journal.close();
      const columns = new Database(file, { readonly: true });
      const rows = (seq: number) =>
        columns
          .prepare(stored('?'))
          .all(seq)
          .map((r) => Object.values(r as object));
      assert.deepEqual(rows(1), [...LEGACY.slice(0, 4).map((l) => [null, l.raw]), ['held_by_policy', 'never sent']]);
      assert.deepEqual(rows(2), [['engine_rejected', 'upstream_unreachable: words']]);
      columns.close();
    });
  });

  it('PostgreSQL: journal tables of the schema before reason_code are migrated; their rows read as before, new ones keep the code in its column', async () => {
    const { schema, drop } = testSchema();
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      // Version 3, the last schema without the column.
      await client.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema};
        CREATE TABLE schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
        INSERT INTO schema_versions VALUES ('journal', 3);
        CREATE TABLE submissions (seq BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, key_id TEXT NOT NULL, anti_mev BOOLEAN NOT NULL,
          bundle_id TEXT, routes TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, owner TEXT, lease_until BIGINT);
        CREATE TABLE submission_transactions (seq BIGINT NOT NULL REFERENCES submissions (seq), position INTEGER NOT NULL,
          signature TEXT NOT NULL, wire BYTEA NOT NULL, state TEXT NOT NULL, slot BIGINT, reason TEXT, error JSONB,
          attempts INTEGER NOT NULL DEFAULT 0, landed_at BIGINT, slots_to_land BIGINT, PRIMARY KEY (seq, position));
        CREATE TABLE protected_sends (id BIGSERIAL PRIMARY KEY, seq BIGINT NOT NULL, position INTEGER NOT NULL, evidence JSONB NOT NULL);`);
      const batch = legacyBatch();
      await client.query(
        "INSERT INTO submissions (kind, key_id, anti_mev, routes, created_at, updated_at) VALUES ('batch', $1, true, 'rpc', 1000, 1000)",
        [batch.keyId],
      );
      for (const [position, tx] of batch.transactions.entries())
        await client.query(
          'INSERT INTO submission_transactions (seq, position, signature, wire, state, reason) VALUES (1, $1, $2, $3, $4, $5)',
          [position, tx.signature, tx.wire, LEGACY[position]!.state, LEGACY[position]!.raw],
        );

      const journal = await createPostgresJournal(POSTGRES_URL, schema);
      try {
        assert.deepEqual(reasons((await journal.after(0))[0]!), LEGACY_READ);
        await writeOverLegacy(journal, 1);
      } finally {
        await journal.close();
      }
      const rows = async (seq: number) => (await client.query(stored('$1'), [seq])).rows.map((r) => Object.values(r as object));
      assert.deepEqual(await rows(1), [...LEGACY.slice(0, 4).map((l) => [null, l.raw]), ['held_by_policy', 'never sent']]);
      assert.deepEqual(await rows(2), [['engine_rejected', 'upstream_unreachable: words']]);
    } finally {
      await client.end();
      await drop();
    }
  });

  it('the log: a frame in the encoding before the code had a field (reason `code: words`, changes without reasonCode) replays and reads as before', async () => {
    await withJournalFile(async (file) => {
      const batch = legacyBatch();
      const log = openJournalLog(file, 1, 'NORMAL');
      // The record (the failed one still forwarded, the expired one held), then changes as the old encoder wrote them.
      log.append(
        oldFrame(
          1,
          batch,
          [
            [LEGACY[0]!.state, LEGACY[0]!.raw],
            ['forwarded', null],
            ['held', 'held_by_policy: not trusted'],
            [LEGACY[3]!.state, LEGACY[3]!.raw],
            [LEGACY[4]!.state, LEGACY[4]!.raw],
          ],
          [
            { seq: 1, position: 1, state: 'failed', slot: 9, error: { InstructionError: [0, { Custom: 1 }] } },
            { seq: 1, position: 2, state: 'expired', reason: LEGACY[2]!.raw },
          ],
        ),
      );
      log.close();
      const journal = createSqliteJournal(file);
      assert.deepEqual(reasons((await journal.after(0))[0]!), LEGACY_READ);
      await writeOverLegacy(journal, 1);
      await journal.close();
    });
  });
});

/**
 * One frame of the journal log as the encoder wrote it before the code had a field of its own
 * (journal-log-codec.ts then): a record whose transactions end `u8 state, str? reason`, and
 * the changes' JSON, whose reasons are `code: words`.
 */
function oldFrame(seq: number, submission: NewSubmission, states: [TransactionState, string | null][], changes: object[]): Buffer {
  const parts: Buffer[] = [Buffer.alloc(FRAME_HEADER_BYTES)];
  const put = (size: number, write: (b: Buffer) => void) => {
    const b = Buffer.alloc(size);
    write(b);
    parts.push(b);
  };
  const str = (value: string | null) => {
    if (value === null) return put(2, (b) => b.writeUInt16LE(0xffff));
    const bytes = Buffer.from(value, 'utf8');
    put(2, (b) => b.writeUInt16LE(bytes.length));
    parts.push(bytes);
  };
  put(12, (b) => (b.writeDoubleLE(1_795_000_000_000), b.writeUInt32LE(1, 8)));
  put(
    10,
    (b) => (
      b.writeDoubleLE(seq),
      (b[8] = ['transaction', 'batch', 'bundle'].indexOf(submission.kind)),
      (b[9] = submission.antiMev ? 1 : 0)
    ),
  );
  str(submission.keyId);
  str(submission.bundleId);
  str(submission.routes.join(','));
  put(2, (b) => b.writeUInt16LE(submission.transactions.length));
  submission.transactions.forEach((tx, i) => {
    str(tx.signature);
    put(2, (b) => b.writeUInt16LE(tx.wire.length));
    parts.push(tx.wire);
    put(1, (b) => (b[0] = TRANSACTION_STATES.indexOf(states[i]![0])));
    str(states[i]![1]);
  });
  const json = Buffer.from(JSON.stringify({ changes, attempts: [], sends: [] }), 'utf8');
  put(4, (b) => b.writeUInt32LE(json.length));
  parts.push(json);
  return Buffer.concat(parts);
}
