/**
 * The accounts a bundle could write, as they were before it ran: a bundle lands all or
 * nothing, and LiteSVM commits each transaction as it goes, so when one fails the ledger
 * puts these back. Accounts only: statuses are recorded after the whole bundle succeeds.
 */
import { Account, type LiteSvm } from 'litesvm/dist/internal';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { lookupAddresses } from './lookup-tables';

/** The system program's address, the owner of an account that did not exist. */
const SYSTEM_PROGRAM = new Uint8Array(32);

export class AccountSnapshot {
  private constructor(
    private readonly svm: LiteSvm,
    /** latin1 address → the account, or null where there was none. */
    private readonly saved: Map<string, Account | null>,
  ) {}

  /** Every account the transactions can write: static keys and addresses loaded from lookup tables. */
  static of(svm: LiteSvm, txs: readonly ValidatedTransaction[]): AccountSnapshot {
    const saved = new Map<string, Account | null>();
    const keep = (address: Uint8Array) => {
      const key = Buffer.from(address).toString('latin1');
      if (!saved.has(key)) saved.set(key, svm.getAccount(address));
    };
    for (const tx of txs) {
      for (const key of tx.wire.staticAccountKeys) keep(key);
      for (const address of lookupAddresses(svm, tx.wire)) keep(address);
    }
    return new AccountSnapshot(svm, saved);
  }

  /** Puts every account back; one that did not exist becomes empty again (zero lamports: gone). */
  restore(): void {
    for (const [key, account] of this.saved) {
      const address = Buffer.from(key, 'latin1');
      this.svm.setAccount(address, account ?? new Account(0n, new Uint8Array(0), SYSTEM_PROGRAM, false, 0n));
    }
  }
}
