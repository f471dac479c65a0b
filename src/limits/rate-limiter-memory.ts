/** Rate limits kept in this process: exact for one gateway, not shared with others. */
import { gcra, type RateLimiter } from './rate-limiter';

export function createMemoryRateLimiter(): RateLimiter {
  const tats = new Map<string, number>();
  return {
    async take(requests) {
      const now = Date.now();
      const step = gcra(
        requests.map((r) => tats.get(r.bucket)),
        requests,
        now,
      );
      if ('waitMs' in step) return { allowed: false, retryAfterMs: Math.ceil(step.waitMs) };
      requests.forEach((r, i) => tats.set(r.bucket, step.next[i]!));
      // Idle buckets are forgotten (an arrival time in the past is the same as none).
      if (tats.size > 10_000) for (const [bucket, tat] of tats) if (tat < now) tats.delete(bucket);
      return { allowed: true };
    },
    close: async () => {},
  };
}
