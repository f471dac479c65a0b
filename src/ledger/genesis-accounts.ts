/**
 * Accounts a cluster has from its start that LiteSVM's genesis lacks: Jito's tip accounts,
 * rent-exempt (as on mainnet, where they exist and hold balances), so that a tip of the
 * minimum lands. Created on every open, so that a state saved before they existed gets them.
 */
import bs58 from 'bs58';
import { Account, type LiteSvm } from 'litesvm/dist/internal';
import { JITO_TIP_ACCOUNTS } from '../core/jito-tip-accounts';
import type { TouchedAccounts } from './touched-accounts';

/** The system program's address, the owner of a genesis account. */
const SYSTEM_PROGRAM = new Uint8Array(32);

/** Creates those missing (or empty); they are touched, so a save keeps them. */
export function createGenesisAccounts(svm: LiteSvm, touched: TouchedAccounts): void {
  const rentExempt = svm.minimumBalanceForRentExemption(0n);
  for (const tipAccount of JITO_TIP_ACCOUNTS) {
    const address = bs58.decode(tipAccount);
    if ((svm.getAccount(address)?.lamports() ?? 0n) > 0n) continue;
    svm.setAccount(address, new Account(rentExempt, new Uint8Array(0), SYSTEM_PROGRAM, false, 0n));
    touched.touch(address);
  }
}
