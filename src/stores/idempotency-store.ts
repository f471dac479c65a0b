/**
 * Idempotency keys: what each `Idempotency-Key` an API key sent was first used for, and the
 * answer it got. A record is claimed (durably) before its submission goes to the pipeline and
 * given its answer before the answer leaves, so a retry after a time-out, a restart or on
 * another gateway of the cluster finds it. Adapters: SQLite in the data dir
 * (idempotency-store-sqlite.ts), PostgreSQL shared by a cluster (idempotency-store-postgres.ts).
 */

export interface NewIdempotencyRecord {
  /** What the submission was: a digest of its operation, anti-MEV flag and transactions. */
  readonly fingerprint: string;
  readonly operation: string;
  /** The submission's transactions' signatures, in order. */
  readonly signatures: readonly string[];
  /** Set for bundles. */
  readonly bundleId: string | null;
}

export interface IdempotencyRecord extends NewIdempotencyRecord {
  /** The first answer's value (JSON), or null while it is being answered. */
  readonly answer: string | null;
  /** When the key was first used (epoch ms): it is kept for the configured time from then. */
  readonly createdAt: number;
  /** When the submission was last claimed (epoch ms): a claim with no answer long after this was abandoned. */
  readonly claimedAt: number;
}

/** A record's row, as both adapters read it back. */
export interface Row {
  fingerprint: string;
  operation: string;
  signatures: string;
  bundle_id: string | null;
  answer: string | null;
  created_at: number;
  claimed_at: number;
}

export const toRecord = (row: Row): IdempotencyRecord => ({
  fingerprint: row.fingerprint,
  operation: row.operation,
  signatures: row.signatures === '' ? [] : row.signatures.split(','),
  bundleId: row.bundle_id,
  answer: row.answer,
  createdAt: row.created_at,
  claimedAt: row.claimed_at,
});

export type Claim = { readonly claimed: true } | { readonly claimed: false; readonly existing: IdempotencyRecord };

export interface IdempotencyStore {
  /** Claims `key` of `keyId` for this submission, unless a record made after `expiredBefore` holds it: then that record. */
  claim(keyId: string, key: string, record: NewIdempotencyRecord, now: number, expiredBefore: number): Promise<Claim>;
  /** Takes over a claim that has had no answer since `claimedAt` (its gateway stopped): false if someone else did first. */
  takeOver(keyId: string, key: string, claimedAt: number, now: number): Promise<boolean>;
  /** Gives the claim its answer (JSON): durable once this resolves. */
  answer(keyId: string, key: string, answer: string): Promise<void>;
  /** Drops a claim whose submission was refused (nothing was sent: a retry is answered afresh). */
  release(keyId: string, key: string): Promise<void>;
  get(keyId: string, key: string): Promise<IdempotencyRecord | null>;
  /** Deletes the records made before `before`; returns how many. */
  purge(before: number): Promise<number>;
  close(): Promise<void>;
}
