/**
 * The addresses a v0 transaction loads from address lookup tables, read from the tables as
 * the ledger holds them. LiteSVM resolves them itself when it runs a transaction, but does
 * not say which they were: the ledger needs them before (to snapshot what a bundle may
 * write) and after (for balances and `getTransaction`'s loadedAddresses).
 */
import type { LiteSvm } from 'litesvm/dist/internal';
import type { WireTransaction } from '../validation/wire-transaction';

/** Address lookup tables keep a 56-byte header before their addresses. */
const LOOKUP_TABLE_META_SIZE = 56;

export interface LoadedAddresses {
  readonly writable: Uint8Array[];
  readonly readonly: Uint8Array[];
}

/** Every address the transaction loads, writable ones first. */
export function lookupAddresses(svm: LiteSvm, wire: WireTransaction): Uint8Array[] {
  const loaded = loadedAddresses(svm, wire);
  return [...loaded.writable, ...loaded.readonly];
}

/**
 * The addresses a v0 transaction loads from lookup tables, in Solana's order: every table's
 * writable ones, then every table's readonly ones. A missing table or index loads nothing
 * here: LiteSVM refuses such a transaction when it runs it.
 */
export function loadedAddresses(svm: LiteSvm, wire: WireTransaction): LoadedAddresses {
  const loaded = { writable: [] as Uint8Array[], readonly: [] as Uint8Array[] };
  for (const lookup of wire.addressTableLookups) {
    const table = svm.getAccount(lookup.tableAddress);
    if (table === null) continue;
    const data = table.data();
    const pick = (indexes: Iterable<number>, into: Uint8Array[]) => {
      for (const index of indexes) {
        const start = LOOKUP_TABLE_META_SIZE + index * 32;
        if (start + 32 <= data.length) into.push(data.subarray(start, start + 32));
      }
    };
    pick(lookup.writableIndexes, loaded.writable);
    pick(lookup.readonlyIndexes, loaded.readonly);
  }
  return loaded;
}
