/**
 * The event outbox in SQLite, in a file of its own in the data directory (events.sqlite),
 * written on the request thread in one transaction per flush (events-sink.ts), never on a
 * request's path. One gateway uses it, so a claim needs no lease to be safe; it keeps the
 * lease anyway, so that an event claimed when the process stopped is due again after a restart.
 */
import { RESUME_AFTER_MS, type EventOutbox, type NewOutboxEvent, type OutboxEvent, type ReceiverStatus } from './event-outbox';
import { openSqlite, type Migrations } from './database/sqlite-database';

const MIGRATIONS: Migrations = [
  `CREATE TABLE events (
     ord INTEGER PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     key_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     type TEXT NOT NULL,
     payload TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_at INTEGER NOT NULL,
     claimed_until INTEGER NOT NULL DEFAULT 0,
     delivered_at INTEGER,
     member INTEGER NOT NULL DEFAULT 0,
     step INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX events_undelivered ON events(key_id, seq, ord) WHERE delivered_at IS NULL;
   CREATE INDEX events_delivered ON events(delivered_at) WHERE delivered_at IS NOT NULL;
   CREATE TABLE receivers (
     key_id TEXT PRIMARY KEY,
     failing_since INTEGER,
     paused_at INTEGER,
     last_error TEXT,
     last_delivered_at INTEGER,
     dropped INTEGER NOT NULL DEFAULT 0,
     streaming_until INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX events_by_key ON events(key_id, ord);`,
  // A claim reads a key's due events in the order they fell due (claim, below); an addition
  // looks for its submission's later steps, delivered or not (add).
  `CREATE INDEX events_due ON events(key_id, next_at, ord) WHERE delivered_at IS NULL;
   CREATE INDEX events_by_submission ON events(key_id, seq, member, step);`,
];

/** An addition: not once a later step of the same member is held; due no earlier than its submission's events waiting. */
export const INSERT = `INSERT INTO events (id, key_id, seq, type, payload, created_at, next_at, delivered_at, member, step)
  SELECT @id, @keyId, @seq, @type, @payload, @now,
    MAX(@now, COALESCE((SELECT MAX(w.next_at) FROM events w INDEXED BY events_undelivered WHERE w.key_id = @keyId AND w.seq = @seq AND w.delivered_at IS NULL), 0)),
    @deliveredAt, @member, @step
  WHERE NOT EXISTS (SELECT 1 FROM events WHERE key_id = @keyId AND seq = @seq AND member = @member AND step > @step)
  ON CONFLICT (id) DO NOTHING`;

/**
 * A key's heads (its submissions' earliest undelivered events) that are due and unclaimed, due
 * first first, through events_due: a later event of a submission is due no earlier than its
 * earliest (`failed`, INSERT), so the scan stops at the first not yet due, however many wait
 * behind a receiver that is down.
 */
export const HEADS = `SELECT e.* FROM events e
  WHERE e.delivered_at IS NULL AND e.key_id = ? AND e.next_at <= ? AND e.claimed_until <= ?
    AND NOT EXISTS (SELECT 1 FROM events p WHERE p.key_id = e.key_id AND p.seq = e.seq AND p.delivered_at IS NULL AND p.ord < e.ord)
  ORDER BY e.next_at, e.ord LIMIT ?`;

interface EventRow {
  ord: number;
  id: string;
  key_id: string;
  seq: number;
  type: string;
  payload: string;
  attempts: number;
  created_at: number;
}

interface ReceiverRow {
  key_id: string;
  failing_since: number | null;
  paused_at: number | null;
  last_error: string | null;
  last_delivered_at: number | null;
  dropped: number;
}

interface InsertRow {
  id: string;
  keyId: string;
  seq: number;
  type: string;
  payload: string;
  now: number;
  deliveredAt: number | null;
  member: number;
  step: number;
}

export const toOutboxEvent = (row: EventRow): OutboxEvent => ({
  ord: Number(row.ord),
  id: row.id,
  keyId: row.key_id,
  seq: Number(row.seq),
  type: row.type,
  payload: row.payload,
  attempts: row.attempts,
  createdAt: Number(row.created_at),
});

export const toReceiverStatus = (row: ReceiverRow): ReceiverStatus => ({
  keyId: row.key_id,
  failingSince: row.failing_since === null ? null : Number(row.failing_since),
  pausedAt: row.paused_at === null ? null : Number(row.paused_at),
  lastError: row.last_error,
  lastDeliveredAt: row.last_delivered_at === null ? null : Number(row.last_delivered_at),
  dropped: Number(row.dropped),
});

export function createSqliteEventOutbox(file: string): EventOutbox {
  const db = openSqlite(file, MIGRATIONS);
  const insert = db.prepare<[InsertRow]>(INSERT);
  const heads = db.prepare(HEADS);
  const fail = db.prepare('UPDATE events SET attempts = attempts + 1, next_at = ?, claimed_until = 0 WHERE ord = ? RETURNING key_id, seq');
  // Its submission's later events wait for it: not due before it is (HEADS reads by due time).
  const holdLater = db.prepare(
    'UPDATE events INDEXED BY events_undelivered SET next_at = ? WHERE key_id = ? AND seq = ? AND delivered_at IS NULL AND ord > ? AND next_at < ?',
  );
  const addAll = db.transaction((events: readonly NewOutboxEvent[], now: number) => {
    let added = 0;
    for (const e of events) {
      added += insert.run({
        id: e.id,
        keyId: e.keyId,
        seq: e.seq,
        type: e.type,
        payload: e.payload,
        now,
        deliveredAt: e.deliver ? null : now,
        member: e.member ?? 0,
        step: e.step ?? 0,
      }).changes;
    }
    return added;
  });
  const upsertReceiver = (keyId: string) => db.prepare('INSERT INTO receivers (key_id) VALUES (?) ON CONFLICT DO NOTHING').run(keyId);

  return {
    async add(events, now) {
      return events.length === 0 ? 0 : addAll(events, now);
    },
    async claim(keyIds, now, limit, _owner, leaseMs, perKey = limit) {
      if (keyIds.length === 0) return [];
      const claim = db.transaction(() => {
        const rows = keyIds
          .flatMap((keyId) => heads.all(keyId, now, now, Math.min(perKey, limit)) as EventRow[])
          .sort((a, b) => a.ord - b.ord)
          .slice(0, limit);
        const lease = db.prepare('UPDATE events SET claimed_until = ? WHERE ord = ?');
        for (const row of rows) lease.run(now + leaseMs, row.ord);
        return rows.map(toOutboxEvent);
      });
      return claim();
    },
    async delivered(ord, now) {
      db.prepare('UPDATE events SET delivered_at = ?, claimed_until = 0 WHERE ord = ?').run(now, ord);
    },
    async failed(ord, nextAt) {
      db.transaction(() => {
        const row = fail.get(nextAt, ord) as { key_id: string; seq: number } | undefined;
        if (row !== undefined) holdLater.run(nextAt, row.key_id, row.seq, ord, nextAt);
      })();
    },
    async pending() {
      const rows = db.prepare('SELECT key_id, COUNT(*) AS n FROM events WHERE delivered_at IS NULL GROUP BY key_id').all() as {
        key_id: string;
        n: number;
      }[];
      return new Map(rows.map((row) => [row.key_id, Number(row.n)]));
    },
    async receiver(keyId) {
      const row = db.prepare('SELECT * FROM receivers WHERE key_id = ?').get(keyId) as ReceiverRow | undefined;
      return row === undefined ? null : toReceiverStatus(row);
    },
    async attempted(keyId, now, error) {
      upsertReceiver(keyId);
      if (error === null)
        db.prepare('UPDATE receivers SET failing_since = NULL, last_error = NULL, last_delivered_at = ? WHERE key_id = ?').run(now, keyId);
      else
        db.prepare('UPDATE receivers SET failing_since = COALESCE(failing_since, ?), last_error = ? WHERE key_id = ?').run(
          now,
          error,
          keyId,
        );
    },
    async pause(keyId, now, failingBefore) {
      db.prepare(
        'UPDATE receivers SET paused_at = ? WHERE key_id = ? AND paused_at IS NULL AND failing_since IS NOT NULL AND failing_since <= ?',
      ).run(now, keyId, failingBefore);
    },
    async discard(keyId, now) {
      db.prepare('UPDATE events SET delivered_at = ? WHERE key_id = ? AND delivered_at IS NULL').run(now, keyId);
    },
    async resume(keyId, now) {
      db.transaction(() => {
        db.prepare('UPDATE receivers SET paused_at = NULL, failing_since = NULL WHERE key_id = ?').run(keyId);
        db.prepare('UPDATE events SET next_at = ?, attempts = 0 WHERE key_id = ? AND delivered_at IS NULL').run(
          now + RESUME_AFTER_MS,
          keyId,
        );
      })();
    },
    async dropped(keyId, count) {
      upsertReceiver(keyId);
      db.prepare('UPDATE receivers SET dropped = dropped + ? WHERE key_id = ?').run(count, keyId);
    },
    async after(keyId, afterOrd, limit) {
      const rows = db
        .prepare('SELECT * FROM events WHERE key_id = ? AND ord > ? ORDER BY ord LIMIT ?')
        .all(keyId, afterOrd, limit) as EventRow[];
      return rows.map(toOutboxEvent);
    },
    async lastOrd(keyId) {
      const row = db.prepare('SELECT MAX(ord) AS ord FROM events WHERE key_id = ?').get(keyId) as { ord: number | null };
      return Number(row.ord ?? 0);
    },
    async find(id) {
      const row = db.prepare('SELECT ord, key_id FROM events WHERE id = ?').get(id) as { ord: number; key_id: string } | undefined;
      return row === undefined ? null : { ord: Number(row.ord), keyId: row.key_id };
    },
    async stream(keyId, until) {
      upsertReceiver(keyId);
      db.prepare('UPDATE receivers SET streaming_until = MAX(streaming_until, ?) WHERE key_id = ?').run(until, keyId);
    },
    async streaming(now) {
      return (db.prepare('SELECT key_id FROM receivers WHERE streaming_until > ?').all(now) as { key_id: string }[]).map((r) => r.key_id);
    },
    async prune(before) {
      return db.prepare('DELETE FROM events WHERE delivered_at IS NOT NULL AND delivered_at < ?').run(before).changes;
    },
    async close() {
      db.close();
    },
  };
}
