/**
 * Transactions accepted recently, for duplicate detection: the 16-byte digest of their exact
 * bytes, nothing else, in a flat time window (24 bytes an entry plus its hash slots; no
 * object per entry for the garbage collector to trace). Found only by the same bytes: a
 * known first signature alone proves nothing (a forged copy can carry it), so a different
 * transaction with that signature is validated like any other.
 */
import type { KnownTransactions, ValidatedTransaction } from '../validation/validate-transaction';
import { DigestWindow } from './digest-window';

export class RecentTransactions implements KnownTransactions {
  private readonly window: DigestWindow;

  /**
   * `ttlMs` must cover a blockhash's lifetime (150 slots) so a resubmission is never executed
   * twice; `maxEntries` bounds memory under any load (the oldest go first).
   */
  constructor(ttlMs: number, maxEntries: number) {
    this.window = new DigestWindow(ttlMs, maxEntries);
  }

  has(digest: Buffer): boolean {
    return this.window.has(digest);
  }

  /** Whether a transaction with exactly these bytes was accepted before (perhaps while this one was being verified). */
  includes(tx: ValidatedTransaction): boolean {
    return this.window.has(tx.digest);
  }

  remember(tx: ValidatedTransaction): void {
    this.window.add(tx.digest);
  }

  rememberDigest(digest: Buffer): void {
    this.window.add(digest);
  }

  get size(): number {
    return this.window.size;
  }
}
