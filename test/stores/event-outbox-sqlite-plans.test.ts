/**
 * The SQLite outbox's reads stay bounded however much waits: a claim reads a key's due events
 * through the index by due time (stopping at the first not yet due, with no sort of the
 * rest), and an addition finds its submission's later steps through the index by submission,
 * not by scanning every event the key has had. Checked on SQLite's own query plans.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from '../../src/stores/database/sqlite-binding';
import { createSqliteEventOutbox, HEADS, INSERT } from '../../src/stores/event-outbox-sqlite';

/** SQLite's plan for `sql`, one line per step. */
function plan(file: string, sql: string, parameters: unknown): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(parameters) as { detail: string }[]).map((row) => row.detail);
  } finally {
    db.close();
  }
}

describe('the SQLite outbox plans', () => {
  it('a claim reads through the index by due time, with no sort, and checks heads through the index of waiting events', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-outbox-plans-'));
    try {
      const file = path.join(dir, 'events.sqlite');
      const outbox = createSqliteEventOutbox(file);
      await outbox.close();
      const steps = plan(file, HEADS, ['key_a', 1_000, 1_000, 8]);
      assert.ok(
        steps.some((s) => /SEARCH e USING INDEX events_due \(key_id=\? AND next_at<\?\)/.test(s)),
        steps.join('\n'),
      );
      assert.ok(!steps.some((s) => s.includes('TEMP B-TREE')), `no sort: ${steps.join('\n')}`);
      assert.ok(
        steps.some((s) => /SEARCH p USING (COVERING )?INDEX events_undelivered/.test(s)),
        steps.join('\n'),
      );
      const adding = plan(file, INSERT, {
        id: 'e1',
        keyId: 'key_a',
        seq: 1,
        type: 'transaction.forwarded',
        payload: '{}',
        now: 1_000,
        deliveredAt: null,
        member: 0,
        step: 1,
      });
      assert.ok(
        adding.some((s) =>
          /SEARCH events USING (COVERING )?INDEX events_by_submission \(key_id=\? AND seq=\? AND member=\? AND step>\?\)/.test(s),
        ),
        adding.join('\n'),
      );
      assert.ok(
        adding.some((s) => /SEARCH w USING INDEX events_undelivered \(key_id=\? AND seq=\?\)/.test(s)),
        adding.join('\n'),
      );
      assert.ok(!adding.some((s) => /^SCAN (?!CONSTANT ROW)/.test(s)), `no scan: ${adding.join('\n')}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
