/**
 * `Idempotency-Key` on sendTransaction, sendBundle and /submit-batch: a client that timed out
 * can send the same submission again under the same key and get the first answer, with
 * nothing sent twice — across restarts and across a cluster, since the key is claimed in the
 * store before the submission goes to the pipeline and given its answer before it leaves.
 *
 * - Same API key, same key, same submission: the first answer again (`replayed`); a copy
 *   that arrives while the first is being answered waits for that answer.
 * - Same key, different submission (typically rebuilt with a new blockhash after a time-out):
 *   refused (-32088), nothing sent, naming the first submission so the client follows it.
 * - A refused submission releases its key: nothing was sent, so a retry is answered afresh.
 * - A claim left without an answer (its gateway was killed mid-answer) is taken over after
 *   `abandonedAfterMs`; the pipeline's duplicate detection keeps the same transactions from
 *   being sent twice even then.
 *
 * "The same submission" is the operation, the anti_mev flag and the transactions' bytes: the
 * JSON-RPC id and the send options are not compared (clients change ids between attempts).
 */
import crypto from 'node:crypto';
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import type { Submitted } from '../pipeline/submission-shapes';
import type { IdempotencyRecord, IdempotencyStore, NewIdempotencyRecord } from '../stores/idempotency-store';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { Reply } from '../web/json-rpc-envelope';

/** The header a replayed answer carries (the first answer to its Idempotency-Key, again), as Stripe's API names it. */
const REPLAYED_HEADERS: Readonly<Record<string, string>> = { 'idempotent-replayed': 'true' };

/** A submission's success as a reply: HTTP 200 with `body`, and `Idempotent-Replayed: true` when it is a first answer given again. */
export function answered(body: unknown, submitted: Submitted<unknown>): Reply {
  return submitted.outcome === 'replayed' ? { status: 200, body, headers: REPLAYED_HEADERS } : { status: 200, body };
}

/** Visible ASCII, as the header carries it (a UUID is typical); at most 255 characters, as Stripe allows. */
const ACCEPTABLE = /^[\x21-\x7e]{1,255}$/;
const PURGE_EVERY_MS = 60_000;

export interface IdempotencyOptions {
  readonly store: IdempotencyStore;
  /** How long a key is remembered from its first use. */
  readonly ttlMs: number;
  /** A claim with no answer this long after it was made is taken over. */
  readonly abandonedAfterMs: number;
  /** How often a copy waiting on another gateway's answer looks again. */
  readonly pollMs: number;
  readonly logError: (error: unknown, what: string) => void;
}

export interface IdempotentSubmission {
  readonly keyId: string;
  readonly idempotencyKey: string;
  readonly operation: string;
  readonly antiMev: boolean;
  readonly transactions: readonly ValidatedTransaction[];
  readonly bundleId: string | null;
}

export interface Idempotency {
  run<T>(submission: IdempotentSubmission, submit: () => Promise<Result<Submitted<T>>>): Promise<Result<Submitted<T>>>;
}

/** The header's value, checked: undefined when absent. */
export function parseIdempotencyKey(header: unknown): Result<string | undefined> {
  if (header === undefined) return ok(undefined);
  if (typeof header === 'string' && ACCEPTABLE.test(header)) return ok(header);
  return fail(
    slipwayError(
      'INVALID_REQUEST',
      'Idempotency-Key must be one header of 1 to 255 visible ASCII characters (a UUID is typical); nothing was sent',
    ),
  );
}

export function createIdempotency({ store, ttlMs, abandonedAfterMs, pollMs, logError }: IdempotencyOptions): Idempotency {
  /** This gateway's submissions being answered, by key: copies wait on them without polling. */
  const answering = new Map<string, Promise<unknown>>();
  let purgedAt = 0;

  function purgeNow(now: number): void {
    if (now - purgedAt < PURGE_EVERY_MS) return;
    purgedAt = now;
    store.purge(now - ttlMs).catch((error: unknown) => logError(error, 'purging expired idempotency keys'));
  }

  async function answerAsOwner<T>(s: IdempotentSubmission, id: string, submit: () => Promise<Result<Submitted<T>>>) {
    let done!: () => void;
    answering.set(id, new Promise<void>((resolve) => (done = resolve)));
    try {
      const result = await submit();
      try {
        if (result.ok) await store.answer(s.keyId, s.idempotencyKey, JSON.stringify(result.value.value));
        else await store.release(s.keyId, s.idempotencyKey);
      } catch (error) {
        // The submission stands (journaled); a retry finds the claim abandoned and the pipeline its duplicate.
        logError(error, 'recording an idempotency key’s answer');
      }
      return result;
    } catch (error) {
      await store.release(s.keyId, s.idempotencyKey).catch(() => {});
      throw error;
    } finally {
      answering.delete(id);
      done();
    }
  }

  return {
    async run<T>(s: IdempotentSubmission, submit: () => Promise<Result<Submitted<T>>>): Promise<Result<Submitted<T>>> {
      const id = `${s.keyId}\n${s.idempotencyKey}`;
      const record = {
        fingerprint: fingerprintOf(s),
        operation: s.operation,
        signatures: s.transactions.map((tx) => tx.signature),
        bundleId: s.bundleId,
      };
      let claimed: Result<Submitted<T>> | 'own';
      try {
        claimed = await claimOrWait<T>(s, id, record);
      } catch (error) {
        return fail(
          slipwayError(
            'STORE_UNAVAILABLE',
            `The idempotency keys cannot be reached (${error instanceof Error ? error.message : String(error)}): nothing was sent; retry with the same key`,
          ),
        );
      }
      // Outside the store's try: a failure of the submission itself is not the store's.
      return claimed === 'own' ? answerAsOwner(s, id, submit) : claimed;
    },
  };

  /** 'own' once this request holds the key; else the first answer again, or the refusal of a different submission. */
  async function claimOrWait<T>(s: IdempotentSubmission, id: string, record: NewIdempotencyRecord): Promise<Result<Submitted<T>> | 'own'> {
    for (;;) {
      const now = Date.now();
      purgeNow(now);
      const claim = await store.claim(s.keyId, s.idempotencyKey, record, now, now - ttlMs);
      if (claim.claimed) return 'own';
      let existing: IdempotencyRecord | null = claim.existing;
      // Wait for the first copy's answer: here, or on another gateway (polled), until it is abandoned.
      while (existing !== null && existing.fingerprint === record.fingerprint && existing.answer === null) {
        const here = answering.get(id);
        if (here !== undefined) {
          await here;
        } else if (Date.now() - existing.claimedAt >= abandonedAfterMs) {
          if (await store.takeOver(s.keyId, s.idempotencyKey, existing.claimedAt, Date.now())) return 'own';
        } else {
          await new Promise((resolve) => setTimeout(resolve, pollMs));
        }
        existing = await store.get(s.keyId, s.idempotencyKey);
      }
      if (existing === null) continue; // released: claim it afresh
      if (existing.fingerprint !== record.fingerprint) return fail(reused(s, existing));
      return ok({ value: JSON.parse(existing.answer!) as T, outcome: 'replayed' });
    }
  }
}

function fingerprintOf(s: IdempotentSubmission): string {
  const hash = crypto.createHash('sha256').update(`${s.operation}\n${s.antiMev ? 1 : 0}\n`);
  for (const tx of s.transactions) hash.update(tx.digest);
  return hash.digest('hex');
}

function reused(s: IdempotentSubmission, first: IdempotencyRecord) {
  const what =
    first.bundleId !== null
      ? `bundle ${first.bundleId}`
      : first.signatures.length === 1
        ? `transaction ${first.signatures[0]}`
        : `batch of ${first.signatures.length} (${first.signatures.join(', ')})`;
  return slipwayError(
    'IDEMPOTENCY_KEY_REUSED',
    `Idempotency-Key ${JSON.stringify(s.idempotencyKey)} was first used at ${new Date(first.createdAt).toISOString()} for a different submission: ` +
      `${first.operation} of ${what}. This one was not sent. Follow that submission (getSubmission, getSignatureStatuses), or use a new key for a new submission`,
    {
      idempotencyKey: s.idempotencyKey,
      operation: first.operation,
      signatures: first.signatures,
      bundleId: first.bundleId,
      firstUsedAt: first.createdAt,
    },
  );
}
