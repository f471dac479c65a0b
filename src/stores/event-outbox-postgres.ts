/**
 * The event outbox in PostgreSQL, in the journal's schema, shared by every gateway of a
 * cluster: whichever gateway derives an event adds it (its id is unique, so an event
 * derived by two is kept once), and whichever claims it delivers it. A claim takes rows
 * with `FOR UPDATE SKIP LOCKED` and leases them to its gateway until `claimed_until`, so
 * two gateways never claim one event at once, and another takes it over only after the
 * lease ran out (its gateway stopped mid-delivery).
 */
import { RESUME_AFTER_MS, type EventOutbox, type NewOutboxEvent, type OutboxEvent, type ReceiverStatus } from './event-outbox';
import { inTransaction, openPostgres, type PostgresMigrations } from './database/postgres-database';

const MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE webhook_events (
     ord BIGSERIAL PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     key_id TEXT NOT NULL,
     seq BIGINT NOT NULL,
     type TEXT NOT NULL,
     payload TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_at BIGINT NOT NULL,
     claimed_by TEXT,
     claimed_until BIGINT NOT NULL DEFAULT 0,
     delivered_at BIGINT,
     member INTEGER NOT NULL DEFAULT 0,
     step INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX webhook_events_undelivered ON webhook_events (key_id, seq, ord) WHERE delivered_at IS NULL;
   CREATE INDEX webhook_events_delivered ON webhook_events (delivered_at) WHERE delivered_at IS NOT NULL;
   CREATE TABLE webhook_receivers (
     key_id TEXT PRIMARY KEY,
     failing_since BIGINT,
     paused_at BIGINT,
     last_error TEXT,
     last_delivered_at BIGINT,
     dropped BIGINT NOT NULL DEFAULT 0,
     streaming_until BIGINT NOT NULL DEFAULT 0
   );
   CREATE INDEX webhook_events_by_key ON webhook_events (key_id, ord);`,
  // A claim reads a key's due events in the order they fell due (claim, below); an addition
  // looks for its submission's later steps, delivered or not (add).
  `CREATE INDEX webhook_events_due ON webhook_events (key_id, next_at, ord) WHERE delivered_at IS NULL;
   CREATE INDEX webhook_events_by_submission ON webhook_events (key_id, seq, member, step);`,
];

/**
 * Each key's heads apart (LATERAL), at most $6 each, so one key's backlog cannot take every
 * place; those due first first, through webhook_events_due: a later event of a submission is
 * due no earlier than its earliest (FAILED, add), so the scan stops at the first not yet due,
 * however many wait behind a receiver that is down.
 */
const CLAIM = `UPDATE webhook_events SET claimed_by = $4, claimed_until = $2 + $5
  WHERE ord IN (
    SELECT c.ord FROM unnest($1::text[]) AS k(key_id) CROSS JOIN LATERAL (
      SELECT e.ord FROM webhook_events e
      WHERE e.delivered_at IS NULL AND e.key_id = k.key_id AND e.next_at <= $2 AND e.claimed_until <= $2
        AND NOT EXISTS (SELECT 1 FROM webhook_events p
                        WHERE p.key_id = e.key_id AND p.seq = e.seq AND p.delivered_at IS NULL AND p.ord < e.ord)
      ORDER BY e.next_at, e.ord LIMIT $6
      FOR UPDATE SKIP LOCKED) c
    ORDER BY c.ord LIMIT $3)
  RETURNING ord, id, key_id, seq, type, payload, attempts, created_at`;

/** A failure; its submission's later events wait for it: not due before it is (CLAIM reads by due time). */
const FAILED = `WITH failed AS (
    UPDATE webhook_events SET attempts = attempts + 1, next_at = $2, claimed_until = 0, claimed_by = NULL WHERE ord = $1
    RETURNING key_id, seq)
  UPDATE webhook_events w SET next_at = $2 FROM failed f
  WHERE w.key_id = f.key_id AND w.seq = f.seq AND w.delivered_at IS NULL AND w.ord > $1 AND w.next_at < $2`;

interface EventRow {
  ord: string;
  id: string;
  key_id: string;
  seq: string;
  type: string;
  payload: string;
  attempts: number;
  created_at: string;
}

interface ReceiverRow {
  key_id: string;
  failing_since: string | null;
  paused_at: string | null;
  last_error: string | null;
  last_delivered_at: string | null;
  dropped: string;
}

const toEvent = (row: EventRow): OutboxEvent => ({
  ord: Number(row.ord),
  id: row.id,
  keyId: row.key_id,
  seq: Number(row.seq),
  type: row.type,
  payload: row.payload,
  attempts: row.attempts,
  createdAt: Number(row.created_at),
});

const orNull = (value: string | null) => (value === null ? null : Number(value));

const toStatus = (row: ReceiverRow): ReceiverStatus => ({
  keyId: row.key_id,
  failingSince: orNull(row.failing_since),
  pausedAt: orNull(row.paused_at),
  lastError: row.last_error,
  lastDeliveredAt: orNull(row.last_delivered_at),
  dropped: Number(row.dropped),
});

export async function createPostgresEventOutbox(url: string, schema: string): Promise<EventOutbox> {
  const pool = await openPostgres(url, schema, { component: 'webhook_events', migrations: MIGRATIONS, connections: 4 });
  const receiverRow = (keyId: string) => pool.query('INSERT INTO webhook_receivers (key_id) VALUES ($1) ON CONFLICT DO NOTHING', [keyId]);
  return {
    async add(events: readonly NewOutboxEvent[], now) {
      if (events.length === 0) return 0;
      // One addition at a time, to its commit: ord values then become visible in their order,
      // so that a stream reading past the last ord it saw never skips one committed late.
      // WITH ORDINALITY keeps the order given, so ord follows it.
      return inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${schema}.webhook_events`]);
        const result = await client.query(
          `INSERT INTO webhook_events (id, key_id, seq, type, payload, created_at, next_at, delivered_at, member, step)
           SELECT id, key_id, seq, type, payload, $6::bigint,
             -- Due no earlier than its submission's events waiting (see failed).
             GREATEST($6::bigint, (SELECT MAX(w.next_at) FROM webhook_events w
                                   WHERE w.key_id = e.key_id AND w.seq = e.seq AND w.delivered_at IS NULL)),
             CASE WHEN deliver THEN NULL ELSE $6::bigint END, member, step
           FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $7::boolean[], $8::int[], $9::int[])
             WITH ORDINALITY AS e(id, key_id, seq, type, payload, deliver, member, step, n)
           WHERE NOT EXISTS (SELECT 1 FROM webhook_events w
                             WHERE w.key_id = e.key_id AND w.seq = e.seq AND w.member = e.member AND w.step > e.step)
           ORDER BY n
           ON CONFLICT (id) DO NOTHING`,
          [
            events.map((e) => e.id),
            events.map((e) => e.keyId),
            events.map((e) => e.seq),
            events.map((e) => e.type),
            events.map((e) => e.payload),
            now,
            events.map((e) => e.deliver),
            events.map((e) => e.member ?? 0),
            events.map((e) => e.step ?? 0),
          ],
        );
        return result.rowCount ?? 0;
      });
    },
    async claim(keyIds, now, limit, owner, leaseMs, perKey = limit) {
      if (keyIds.length === 0) return [];
      const { rows } = await pool.query<EventRow>(CLAIM, [keyIds, now, limit, owner, leaseMs, Math.min(perKey, limit)]);
      return rows.map(toEvent).sort((a, b) => a.ord - b.ord);
    },
    async delivered(ord, now) {
      await pool.query('UPDATE webhook_events SET delivered_at = $2, claimed_until = 0, claimed_by = NULL WHERE ord = $1', [ord, now]);
    },
    async failed(ord, nextAt) {
      await pool.query(FAILED, [ord, nextAt]);
    },
    async pending() {
      const { rows } = await pool.query<{ key_id: string; n: string }>(
        'SELECT key_id, COUNT(*) AS n FROM webhook_events WHERE delivered_at IS NULL GROUP BY key_id',
      );
      return new Map(rows.map((row) => [row.key_id, Number(row.n)]));
    },
    async receiver(keyId) {
      const { rows } = await pool.query<ReceiverRow>('SELECT * FROM webhook_receivers WHERE key_id = $1', [keyId]);
      return rows[0] === undefined ? null : toStatus(rows[0]);
    },
    async attempted(keyId, now, error) {
      await receiverRow(keyId);
      if (error === null)
        await pool.query('UPDATE webhook_receivers SET failing_since = NULL, last_error = NULL, last_delivered_at = $2 WHERE key_id = $1', [
          keyId,
          now,
        ]);
      else
        await pool.query('UPDATE webhook_receivers SET failing_since = COALESCE(failing_since, $2), last_error = $3 WHERE key_id = $1', [
          keyId,
          now,
          error,
        ]);
    },
    async pause(keyId, now, failingBefore) {
      await pool.query(
        'UPDATE webhook_receivers SET paused_at = $2 WHERE key_id = $1 AND paused_at IS NULL AND failing_since IS NOT NULL AND failing_since <= $3',
        [keyId, now, failingBefore],
      );
    },
    async discard(keyId, now) {
      await pool.query('UPDATE webhook_events SET delivered_at = $2 WHERE key_id = $1 AND delivered_at IS NULL', [keyId, now]);
    },
    async resume(keyId, now) {
      await pool.query('UPDATE webhook_receivers SET paused_at = NULL, failing_since = NULL WHERE key_id = $1', [keyId]);
      await pool.query('UPDATE webhook_events SET next_at = $2, attempts = 0 WHERE key_id = $1 AND delivered_at IS NULL', [
        keyId,
        now + RESUME_AFTER_MS,
      ]);
    },
    async dropped(keyId, count) {
      await receiverRow(keyId);
      await pool.query('UPDATE webhook_receivers SET dropped = dropped + $2 WHERE key_id = $1', [keyId, count]);
    },
    async after(keyId, afterOrd, limit) {
      const { rows } = await pool.query<EventRow>(
        'SELECT ord, id, key_id, seq, type, payload, attempts, created_at FROM webhook_events WHERE key_id = $1 AND ord > $2 ORDER BY ord LIMIT $3',
        [keyId, afterOrd, limit],
      );
      return rows.map(toEvent);
    },
    async lastOrd(keyId) {
      const { rows } = await pool.query<{ ord: string | null }>('SELECT MAX(ord) AS ord FROM webhook_events WHERE key_id = $1', [keyId]);
      return Number(rows[0]?.ord ?? 0);
    },
    async find(id) {
      const { rows } = await pool.query<{ ord: string; key_id: string }>('SELECT ord, key_id FROM webhook_events WHERE id = $1', [id]);
      return rows[0] === undefined ? null : { ord: Number(rows[0].ord), keyId: rows[0].key_id };
    },
    async stream(keyId, until) {
      await receiverRow(keyId);
      await pool.query('UPDATE webhook_receivers SET streaming_until = GREATEST(streaming_until, $2) WHERE key_id = $1', [keyId, until]);
    },
    async streaming(now) {
      const { rows } = await pool.query<{ key_id: string }>('SELECT key_id FROM webhook_receivers WHERE streaming_until > $1', [now]);
      return rows.map((row) => row.key_id);
    },
    async prune(before) {
      const result = await pool.query('DELETE FROM webhook_events WHERE delivered_at IS NOT NULL AND delivered_at < $1', [before]);
      return result.rowCount ?? 0;
    },
    async close() {
      await pool.end();
    },
  };
}
