/** Duplicate claims in Redis (duplicate-claims.ts): `SET NX` with an expiry, one round trip per request. */
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
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.set(key(id), 'pending', 'PX', PENDING_MS, 'NX');
      const results = (await pipeline.exec()) ?? [];
      return Promise.all(
        ids.map(async (id, i) => {
          const [error, reply] = results[i] ?? [new Error('no reply'), null];
          if (error !== null) throw error;
          return reply === 'OK' ? 'claimed' : settle(id);
        }),
      );
    },
    async confirm(ids) {
      if (ids.length === 0) return;
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.set(key(id), 'done', 'PX', ttlMs);
      await pipeline.exec();
    },
    async release(ids) {
      if (ids.length > 0) await redis.del(...ids.map(key));
    },
  };
}
