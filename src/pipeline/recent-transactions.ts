/**
 * Transactions accepted recently, for duplicate detection. An entry is found only by the
 * exact same bytes: a known first signature alone proves nothing (a forged copy can carry
 * it), so a different transaction with that signature is validated like any other.
 */
import type { KnownTransactions, ValidatedTransaction } from '../validation/validate-transaction';
import { TtlMap } from './ttl-map';

export class RecentTransactions implements KnownTransactions {
  private readonly bySignature: TtlMap<string, ValidatedTransaction>;

  /** `ttlMs` must cover a blockhash's lifetime (150 slots) so a resubmission is never executed twice. */
  constructor(ttlMs: number) {
    this.bySignature = new TtlMap(ttlMs);
  }

  findExact(firstSignature: Buffer, bytes: Buffer): ValidatedTransaction | undefined {
    const known = this.bySignature.get(firstSignature.toString('latin1'));
    return known !== undefined && known.wire.bytes.equals(bytes) ? known : undefined;
  }

  /** Whether a transaction with exactly these bytes was accepted before (perhaps while this one was being verified). */
  includes(tx: ValidatedTransaction): boolean {
    const known = this.bySignature.get(tx.wire.signatures[0]!.toString('latin1'));
    return known !== undefined && (known === tx || known.wire.bytes.equals(tx.wire.bytes));
  }

  remember(tx: ValidatedTransaction): void {
    this.bySignature.set(tx.wire.signatures[0]!.toString('latin1'), tx);
  }
}
