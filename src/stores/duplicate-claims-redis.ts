/**
 * Duplicate claims in Redis (duplicate-claims.ts): `SET NX` with an expiry. Each command is
 * issued on its own: the connection auto-pipelines (redis-connection.ts), so one turn's
 * claims, of every request, go to Redis together; an explicit pipeline per request would
 * be a write of its own. Confirms, which nobody waits for on the request path, wait a few
 * milliseconds for the next claim and go in the same write.
 */
import type { Redis } from 'ioredis';
import type { ClaimOutcome, DuplicateClaims } from './duplicate-claims';

/** How long a pending claim lives if its gateway dies before settling it. */
const PENDING_MS = 10_000;
/** How long a gateway waits for another's pending claim to settle, checking every POLL_MS. */
const SETTLE_WAIT_MS = 2_000;
const POLL_MS = 25;
/** A confirm waits at most this long for a claim to go to Redis with (one write for both). */
const CONFIRM_WAIT_MS = 5;

export function createRedisDuplicateClaims(redis: Redis, prefix: string, ttlMs: number): DuplicateClaims {
  const key = (id: string) => `${prefix}dup:${id}`;

  /** After a failed claim: wait for the other claim to settle. */
  const settle = async (id: string): Promise<ClaimOutcome> => {
    const started = Date.now();
    for (;;) {
      const state = await redis.get(key(id));
      if (state === 'done') return 'duplicate';
      if (state === null) {
        // Given back (or expired): claim it now.
        if ((await redis.set(key(id), 'pending', 'PX', PENDING_MS, 'NX')) === 'OK') return 'claimed';
        continue;
      }
      if (Date.now() - started >= SETTLE_WAIT_MS) return 'unsettled';
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };

  let confirming: { ids: readonly string[]; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let confirmTimer: NodeJS.Timeout | undefined;
  /** Sends the confirms waiting, now (in the same turn as a claim: in its write). */
  const sendConfirms = () => {
    clearTimeout(confirmTimer);
    confirmTimer = undefined;
    const batch = confirming;
    confirming = [];
    for (const { ids, resolve, reject } of batch) {
      Promise.all(ids.map((id) => redis.set(key(id), 'done', 'PX', ttlMs))).then(() => resolve(), reject);
    }
  };

  return {
    async claim(ids) {
      if (confirming.length > 0) sendConfirms();
      const replies = await Promise.all(ids.map((id) => redis.set(key(id), 'pending', 'PX', PENDING_MS, 'NX')));
      return Promise.all(ids.map((id, i) => (replies[i] === 'OK' ? ('claimed' as const) : settle(id))));
    },
    confirm(ids) {
      if (ids.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        confirming.push({ ids, resolve, reject });
        confirmTimer ??= setTimeout(sendConfirms, CONFIRM_WAIT_MS);
      });
    },
    async release(ids) {
      if (ids.length > 0) await redis.del(...ids.map(key));
    },
  };
}
