/**
 * Duplicate claims in Redis (duplicate-claims.ts): `SET NX` with an expiry. Each command is
 * issued on its own: the connection auto-pipelines (redis-connection.ts), so one turn's
 * claims, of every request, go to Redis together; an explicit pipeline per request would
 * be a write of its own.
 */
import type { Redis } from 'ioredis';
import type { ClaimOutcome, DuplicateClaims } from './duplicate-claims';

/** How long a pending claim lives if its gateway dies before settling it. */
const PENDING_MS = 10_000;
/** How long a gateway waits for another's pending claim to settle, checking every POLL_MS. */
const SETTLE_WAIT_MS = 2_000;
const POLL_MS = 25;

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

  return {
    async claim(ids) {
      const replies = await Promise.all(ids.map((id) => redis.set(key(id), 'pending', 'PX', PENDING_MS, 'NX')));
      return Promise.all(ids.map((id, i) => (replies[i] === 'OK' ? ('claimed' as const) : settle(id))));
    },
    async confirm(ids) {
      await Promise.all(ids.map((id) => redis.set(key(id), 'done', 'PX', ttlMs)));
    },
    async release(ids) {
      if (ids.length > 0) await redis.del(...ids.map(key));
    },
  };
}
