/**
 * A key's rate limits, taken at the edge: after the key is known and before anything costly
 * is done for it (parsing transactions, verifying signatures, simulating, reading upstream).
 * Taken later, a key limited to 1 transaction a second could still make the gateway verify
 * as many signatures as it can send; taken here, what a key costs is bounded by its limits,
 * refused transactions included.
 *
 * - Submissions: `sendTransaction` counts 1, a batch or bundle its number of transactions
 *   (at most 5 are counted: a longer list is refused as too long), and a bundle also 1
 *   against the key's bundles per second; all or nothing.
 * - Reads: every JSON-RPC entry that is not a submission counts 1 against the key's reads per
 *   second, taken once for a whole HTTP request (a batch of 40 reads takes 40 in one step).
 *
 * A request larger than a limit's burst (a second's worth) can never fit, and says so; a
 * store that cannot be reached refuses it as unavailable (never unlimited).
 */
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import { rateLimitedTotal } from '../metrics/metrics';
import type { ApiKeyRecord } from '../stores/key-store';
import type { BucketRequest, RateLimiter } from './rate-limiter';

export interface KeyLimits {
  /** Takes `transactions` (and, for a bundle, one bundle) from the key's buckets. */
  submission(key: ApiKeyRecord, transactions: number, bundle: boolean): Promise<Result<undefined>>;
  /** Takes `reads` from the key's reads bucket. */
  reads(key: ApiKeyRecord, reads: number): Promise<Result<undefined>>;
}

/** What a list of transactions counts: its length, within the 1 to 5 a submission may carry. */
export const transactionsIn = (list: unknown): number => (Array.isArray(list) ? Math.min(Math.max(list.length, 1), 5) : 1);

const ADMITTED: Result<undefined> = ok(undefined);

export function createKeyLimits(limiter: RateLimiter): KeyLimits {
  async function take(key: ApiKeyRecord, requests: BucketRequest[], described: string[], raise: string): Promise<Result<undefined>> {
    const tooLarge = requests.find((r) => r.cost > r.perSecond);
    if (tooLarge !== undefined) {
      const what = tooLarge.bucket.split(':')[0]!;
      return fail(
        slipwayError(
          'RATE_LIMITED',
          `this request has ${tooLarge.cost} ${UNITS[what]}, more than API key ${key.id} may send in a second (${tooLarge.perSecond}): it can never fit; send fewer at a time or raise the key's limit (${raise})`,
        ),
      );
    }
    let taken;
    try {
      taken = await limiter.take(requests);
    } catch (error) {
      return fail(
        slipwayError(
          'STORE_UNAVAILABLE',
          `the rate-limit store cannot be reached (${(error as Error).message}); nothing was done, try again`,
          { retryAfterMs: 1000 },
        ),
      );
    }
    if (taken.allowed) return ADMITTED;
    rateLimitedTotal.inc({ key_id: key.id });
    return fail(
      slipwayError(
        'RATE_LIMITED',
        `Rate limit exceeded: API key ${key.id} may send ${described.join(' and ')} per second; nothing was ${requests[0]!.bucket.startsWith('reads') ? 'read' : 'submitted'}; this request fits again in ${(taken.retryAfterMs / 1000).toFixed(3)} s`,
        { retryAfterMs: taken.retryAfterMs },
      ),
    );
  }

  return {
    async submission(key, transactions, bundle) {
      const requests: BucketRequest[] = [];
      const described: string[] = [];
      if (key.tps !== null) {
        requests.push({ bucket: `tps:${key.id}`, perSecond: key.tps, cost: transactions });
        described.push(`${key.tps} transactions`);
      }
      if (bundle && key.bundlesPerSecond !== null) {
        requests.push({ bucket: `bundles:${key.id}`, perSecond: key.bundlesPerSecond, cost: 1 });
        described.push(`${key.bundlesPerSecond} bundles`);
      }
      if (requests.length === 0) return ADMITTED;
      return take(key, requests, described, `bin/slipway keys set ${key.id} --tps N`);
    },
    async reads(key, reads) {
      if (key.readsPerSecond === null || reads === 0) return ADMITTED;
      return take(
        key,
        [{ bucket: `reads:${key.id}`, perSecond: key.readsPerSecond, cost: reads }],
        [`${key.readsPerSecond} reads`],
        `bin/slipway keys set ${key.id} --reads-per-second N`,
      );
    },
  };
}

const UNITS: Record<string, string> = { tps: 'transactions', bundles: 'bundles', reads: 'reads' };
