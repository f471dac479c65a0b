/**
 * Transactions accepted recently, for duplicate detection: the digest of their exact bytes
 * (16 bytes), nothing else, so a long window stays small (about 200 bytes an entry with the
 * map's own overhead). Found only by the same bytes: a known first signature alone proves
 * nothing (a forged copy can carry it), so a different transaction with that signature is
 * validated like any other.
 */
import type { KnownTransactions, ValidatedTransaction } from '../validation/validate-transaction';
import { TtlMap } from './ttl-map';

export class RecentTransactions implements KnownTransactions {
  private readonly digests: TtlMap<string, true>;

  /**
   * `ttlMs` must cover a blockhash's lifetime (150 slots) so a resubmission is never executed
   * twice; `maxEntries` bounds memory under any load (the oldest go first).
   */
  constructor(ttlMs: number, maxEntries: number) {
    this.digests = new TtlMap(ttlMs, maxEntries);
  }

  has(digest: string): boolean {
    return this.digests.get(digest) === true;
  }

  /** Whether a transaction with exactly these bytes was accepted before (perhaps while this one was being verified). */
  includes(tx: ValidatedTransaction): boolean {
    return this.has(tx.digest);
  }

  remember(tx: ValidatedTransaction): void {
    this.rememberDigest(tx.digest);
  }

  rememberDigest(digest: string): void {
    this.digests.set(digest, true);
  }

  get size(): number {
    return this.digests.size;
  }
}
