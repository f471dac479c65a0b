/**
 * The embedded ledger's recent history, for `getBlock` and `getTransaction`: each slot's
 * blockhash, time and transactions in order, and each landed transaction with its meta.
 * Bounded (an RPC node without long-term storage forgets too): the last MAX_BLOCKS slots
 * and MAX_TRANSACTIONS transactions, about 20 MB at most. Kept in memory, not across
 * restarts.
 */
import type { TransactionErrorJson } from '../core/transaction-error';

const MAX_BLOCKS = 4_096;
const MAX_TRANSACTIONS = 10_000;

export interface LandedTransaction {
  readonly slot: number;
  readonly wire: Buffer;
  readonly version: 'legacy' | 0;
  readonly err: TransactionErrorJson | null;
  /** Lamports the transaction's accounts lost together: its fee. */
  readonly fee: number;
  /** Balances of its accounts (static keys, then loaded writable, then loaded readonly). */
  readonly preBalances: readonly number[];
  readonly postBalances: readonly number[];
  readonly loadedAddresses: { readonly writable: readonly string[]; readonly readonly: readonly string[] };
  readonly logs: readonly string[];
  readonly unitsConsumed: number;
  /** The account data it loaded as Agave counts it, when it ran (for its cost). */
  readonly loadedAccountsBytes: number | undefined;
}

export interface BlockRecord {
  readonly slot: number;
  readonly blockhash: string;
  /** When the slot began (Unix seconds). */
  readonly blockTime: number;
  /** Its transactions' signatures, in the order they were included. */
  readonly signatures: string[];
  fees: number;
}

export class BlockHistory {
  private readonly blocks = new Map<number, BlockRecord>();
  private readonly transactions = new Map<string, LandedTransaction>();

  /** A slot begins, with its blockhash. */
  beginSlot(slot: number, blockhash: string): void {
    this.blocks.set(slot, { slot, blockhash, blockTime: Math.floor(Date.now() / 1000), signatures: [], fees: 0 });
    if (this.blocks.size > MAX_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
  }

  /** A transaction landed in `landed.slot`. */
  record(signature: string, landed: LandedTransaction): void {
    const block = this.blocks.get(landed.slot);
    if (block !== undefined) {
      block.signatures.push(signature);
      block.fees += landed.fee;
    }
    this.transactions.set(signature, landed);
    if (this.transactions.size > MAX_TRANSACTIONS) this.transactions.delete(this.transactions.keys().next().value!);
  }

  block(slot: number): BlockRecord | undefined {
    return this.blocks.get(slot);
  }

  transaction(signature: string): LandedTransaction | undefined {
    return this.transactions.get(signature);
  }

  /** The kept transactions, the latest landed first. */
  *newestFirst(): IterableIterator<[string, LandedTransaction]> {
    const entries = [...this.transactions];
    for (let i = entries.length - 1; i >= 0; i--) yield entries[i]!;
  }

  /**
   * The oldest slot from which every block is kept whole. Transactions are forgotten oldest
   * first, so only the block of the oldest transaction kept can have lost some of its own.
   */
  get firstCompleteSlot(): number | undefined {
    const oldest: LandedTransaction | undefined = this.transactions.values().next().value;
    if (oldest === undefined) return this.firstSlot;
    const whole = this.blocks.get(oldest.slot)?.signatures.every((signature) => this.transactions.has(signature)) ?? false;
    return Math.max(this.firstSlot ?? 0, whole ? oldest.slot : oldest.slot + 1);
  }

  /** The oldest slot whose block is still kept. */
  get firstSlot(): number | undefined {
    return this.blocks.keys().next().value;
  }
}
