/**
 * The PostgreSQL journal's tables, and the SQL fragments its writes and its leases share:
 * the database's clock, and which submissions are unfinished. Kept apart from the code
 * that runs them, so that the schema reads in one place.
 */
import type { PostgresMigrations } from '../database/postgres-database';

export const MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE submissions (
     seq BIGSERIAL PRIMARY KEY,
     kind TEXT NOT NULL,
     key_id TEXT NOT NULL,
     anti_mev BOOLEAN NOT NULL,
     bundle_id TEXT,
     routes TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX submissions_bundle_id ON submissions (bundle_id) WHERE bundle_id IS NOT NULL;
   CREATE INDEX submissions_created_at ON submissions (created_at);
   CREATE INDEX submissions_key_id ON submissions (key_id, seq);
   CREATE TABLE submission_transactions (
     seq BIGINT NOT NULL REFERENCES submissions (seq),
     position INTEGER NOT NULL,
     signature TEXT NOT NULL,
     wire BYTEA NOT NULL,
     state TEXT NOT NULL,
     slot BIGINT,
     reason TEXT,
     error JSONB,
     attempts INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (seq, position)
   );
   CREATE INDEX submission_transactions_signature ON submission_transactions (signature);
   CREATE INDEX submission_transactions_unfinished ON submission_transactions (seq) WHERE state IN ('forwarded', 'held');
   CREATE TABLE protected_sends (
     id BIGSERIAL PRIMARY KEY,
     seq BIGINT NOT NULL,
     position INTEGER NOT NULL,
     evidence JSONB NOT NULL
   );
   CREATE INDEX protected_sends_seq ON protected_sends (seq);`,
  // Rebroadcast ownership: the gateway following each submission, until when (database time, ms).
  `ALTER TABLE submissions ADD COLUMN owner TEXT, ADD COLUMN lease_until BIGINT;`,
  // The landing report's times: when a transaction landed (epoch ms, estimated from its slot)
  // and how many slots after the one seen at its receipt; null before this and when unknown.
  `ALTER TABLE submission_transactions ADD COLUMN landed_at BIGINT, ADD COLUMN slots_to_land BIGINT;`,
  // The outcome reason's code (core/outcome-reasons.ts) beside its words. Null in rows written
  // before, whose reason holds `code: words` (or words alone): journal-rows.ts reads those.
  `ALTER TABLE submission_transactions ADD COLUMN reason_code TEXT;`,
  // A submission and its transactions are written by one statement (journal-postgres-group.ts)
  // and never deleted, so the foreign key guarded nothing; its check (a lookup and a row lock
  // on the submission, written to the WAL) cost the server about a fifth of each transaction's
  // row (measured: 69 -> 59 µs a submission in groups of 8, 50 -> 34 in groups of 32).
  `ALTER TABLE submission_transactions DROP CONSTRAINT IF EXISTS submission_transactions_seq_fkey;`,
];

/** How long a lease lasts without renewal: a stopped gateway's submissions are taken over after this. */
export const LEASE_MS = 3_000;
/** The database's clock in epoch milliseconds: one clock for every gateway's leases. */
export const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
/** Submissions with a transaction not yet final (the partial index drives it). */
export const UNFINISHED = "SELECT seq FROM submission_transactions WHERE state IN ('forwarded', 'held')";
