/**
 * Duplicate detection across a cluster of gateways (with Redis): a gateway claims what it is
 * about to forward; a claim another gateway holds makes a duplicate. Without a shared store
 * every claim is granted.
 */
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import type { DuplicateClaims } from '../stores/duplicate-claims';

export class ClusterClaims {
  constructor(private readonly claims: DuplicateClaims | undefined) {}

  /** Whether gateways share duplicate detection. */
  get shared(): boolean {
    return this.claims !== undefined;
  }

  /** Per id, true to go ahead, false for a duplicate already submitted through another gateway. */
  async claim(ids: string[]): Promise<Result<boolean[]>> {
    if (this.claims === undefined) return ok(ids.map(() => true));
    try {
      return ok((await this.claims.claim(ids)).map((outcome) => outcome !== 'duplicate'));
    } catch (error) {
      return fail(
        slipwayError(
          'STORE_UNAVAILABLE',
          `duplicate detection cannot reach its store (${(error as Error).message}); nothing was submitted, try again`,
          { retryAfterMs: 1000 },
        ),
      );
    }
  }

  /** Keeps the claims of what went out and gives back the others; not awaited (a failure only makes another gateway wait for the claim to expire). */
  settle(keep: readonly string[], giveBack: readonly string[]): void {
    if (this.claims === undefined) return;
    if (keep.length > 0) this.claims.confirm(keep).catch(() => {});
    if (giveBack.length > 0) this.claims.release(giveBack).catch(() => {});
  }
}
