/**
 * The two adapters of each store besides the journal, for `openStore`
 * (database/open-store.ts), which picks SQLite or PostgreSQL from the configuration; the
 * journal's pair is in journal/open-journal.ts, with its options.
 */
import type { StoreAdapters } from './database/open-store';
import type { EventOutbox } from './event-outbox';
import { createPostgresEventOutbox } from './event-outbox-postgres';
import { createSqliteEventOutbox } from './event-outbox-sqlite';
import type { IdempotencyStore } from './idempotency-store';
import { createPostgresIdempotencyStore } from './idempotency-store-postgres';
import { createSqliteIdempotencyStore } from './idempotency-store-sqlite';
import type { KeyStore } from './key-store';
import { createPostgresKeyStore } from './key-store-postgres';
import { createSqliteKeyStore } from './key-store-sqlite';
import type { RefusalCounts } from './refusal-counts';
import { createPostgresRefusalCounts } from './refusal-counts-postgres';
import { createSqliteRefusalCounts } from './refusal-counts-sqlite';

/** API keys: keys.sqlite, or beside the journal. */
export const KEY_STORE: StoreAdapters<KeyStore> = {
  name: 'the key store',
  sqlite: (paths) => createSqliteKeyStore(paths.keys),
  postgres: createPostgresKeyStore,
};

/** Idempotency keys' records: idempotency.sqlite, or beside the journal (every gateway of a cluster finds every key's). */
export const IDEMPOTENCY_STORE: StoreAdapters<IdempotencyStore> = {
  name: 'the idempotency keys',
  sqlite: (paths) => createSqliteIdempotencyStore(paths.idempotency),
  postgres: createPostgresIdempotencyStore,
};

/** Refusal counts for the landing report: refusals.sqlite, or beside the journal. */
export const REFUSAL_COUNTS: StoreAdapters<RefusalCounts> = {
  name: 'the refusal counts',
  sqlite: (paths) => createSqliteRefusalCounts(paths.refusals),
  postgres: createPostgresRefusalCounts,
};

/** Submission events waiting for their webhooks: events.sqlite, or beside the journal (every gateway of a cluster delivers from it). */
export const EVENT_OUTBOX: StoreAdapters<EventOutbox> = {
  name: 'the event outbox',
  sqlite: (paths) => createSqliteEventOutbox(paths.events),
  postgres: createPostgresEventOutbox,
};
