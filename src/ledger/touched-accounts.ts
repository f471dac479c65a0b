/**
 * The accounts a save of the embedded ledger keeps: every address a transaction, an airdrop
 * or a loaded account has touched. The rest of LiteSVM's accounts are its built-in genesis
 * (programs and sysvars), rebuilt on open; LiteSVM cannot list what changed, so the ledger
 * notes each address as it goes.
 */
import bs58 from 'bs58';
import { Account, type LiteSvm } from 'litesvm/dist/internal';
import type { SavedAccount } from './ledger-state-file';

export class TouchedAccounts {
  /** latin1 keys: cheaper than base58 on every transaction, and as unique. */
  private readonly touched = new Set<string>();

  /** None touched yet, or the saved accounts, put back in LiteSVM. */
  constructor(
    private readonly svm: LiteSvm,
    saved: readonly SavedAccount[] = [],
  ) {
    for (const a of saved) {
      const address = bs58.decode(a.address);
      svm.setAccount(
        address,
        new Account(BigInt(a.lamports), Buffer.from(a.data, 'base64'), bs58.decode(a.owner), a.executable, BigInt(a.rentEpoch)),
      );
      this.touch(address);
    }
  }

  touch(address: Uint8Array): void {
    this.touched.add(Buffer.from(address).toString('latin1'));
  }

  /** Every touched account that exists, as the state file keeps it. */
  saved(): SavedAccount[] {
    const accounts = [];
    for (const key of this.touched) {
      const address = Buffer.from(key, 'latin1');
      const account = this.svm.getAccount(address);
      if (account === null) continue;
      accounts.push({
        address: bs58.encode(address),
        lamports: account.lamports().toString(),
        owner: bs58.encode(account.owner()),
        executable: account.executable(),
        rentEpoch: account.rentEpoch().toString(),
        data: Buffer.from(account.data()).toString('base64'),
      });
    }
    return accounts;
  }
}
