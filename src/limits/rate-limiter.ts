/**
 * Per-key rate limits with GCRA (the generic cell rate algorithm: a token bucket kept as
 * one number, the "theoretical arrival time"). A limit of `perSecond` admits that many
 * units at once (a second's worth of burst), then one every 1/perSecond s. A request takes
 * `cost` units from every bucket it names, all or none: a batch of five counts five against
 * the transactions-per-second bucket, a bundle also one against the bundles bucket, and a
 * request that does not fit whole takes nothing.
 *
 * Two adapters: in process (rate-limiter-memory.ts) and Redis (rate-limiter-redis.ts), so
 * that a limit holds across every gateway of a cluster.
 */

export interface BucketRequest {
  /** The bucket's name, e.g. `tps:key_ab12`. */
  readonly bucket: string;
  /** Units per second; also the burst. */
  readonly perSecond: number;
  readonly cost: number;
}

export type TakeResult = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

export interface RateLimiter {
  /** Takes each request's cost from its bucket if every one fits; otherwise nothing, and how long until they would. */
  take(requests: readonly BucketRequest[]): Promise<TakeResult>;
  close(): Promise<void>;
}

/**
 * One GCRA step over several buckets at `now` (ms): the new arrival times if every request
 * fits, or the wait until they all would. `tats` holds each bucket's arrival time (absent:
 * an idle bucket). The Redis script computes the same (a test checks that they agree).
 */
export function gcra(
  tats: readonly (number | undefined)[],
  requests: readonly BucketRequest[],
  now: number,
): { next: number[] } | { waitMs: number } {
  let waitMs = 0;
  const next = requests.map((request, i) => {
    const interval = 1000 / request.perSecond;
    const tat = Math.max(tats[i] ?? now, now);
    const arrival = tat + request.cost * interval;
    // Fits when no more than a second's worth (the burst) is ahead of now.
    waitMs = Math.max(waitMs, arrival - now - 1000);
    return arrival;
  });
  return waitMs > 0 ? { waitMs } : { next };
}
