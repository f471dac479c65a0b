/**
 * What the fee advice reads of a block: each transaction's compute-unit price (micro-lamports
 * per unit, from its compute-budget instructions), the accounts it writes, and whether it is a
 * vote. Parsed once at the edge from `getBlock`'s answer in base64 (the same bytes on every
 * node); a block that does not have the expected shape is refused with the reason.
 */
import bs58 from 'bs58';
import { computeBudgetOf, isStaticWritable } from '../leader/compute-budget';
import { tipOf } from '../leader/block-auction';
import { priorityAndCost } from '../leader/scheduler-priority';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../validation/wire-transaction';

const VOTE_PROGRAM = bs58.decode('Vote111111111111111111111111111111111111111');

export interface FeeSample {
  /** Micro-lamports per compute unit. */
  readonly price: number;
  /** The accounts it writes (base58): static ones by the header, then those loaded writable. */
  readonly accounts: readonly string[];
  readonly vote: boolean;
  readonly failed: boolean;
  /** Lamports it transferred to the block engine's tip accounts (0 for most). */
  readonly tip: number;
  /** Agave's scheduling priority: what the leader keeps of its fee × 1,000,000 / (its cost + 1). */
  readonly priority: number;
}

export interface SlotFees {
  readonly slot: number;
  readonly samples: readonly FeeSample[];
}

/** The getBlock configuration the samples are read from. */
export const BLOCK_CONFIG = { encoding: 'base64', transactionDetails: 'full', rewards: false, maxSupportedTransactionVersion: 0 };

/** The fee samples of `slot`'s block (getBlock's result with BLOCK_CONFIG), or why it cannot be read. */
export function slotFeesOf(slot: number, block: unknown): SlotFees | string {
  if (block === null) return { slot, samples: [] };
  const transactions = (block as { transactions?: unknown } | undefined)?.transactions;
  if (!Array.isArray(transactions)) return `block ${slot} has no transactions list`;
  const samples: FeeSample[] = [];
  for (const entry of transactions) {
    const sample = sampleOf(entry);
    if (typeof sample === 'string') return `block ${slot}: ${sample}`;
    samples.push(sample);
  }
  return { slot, samples };
}

/** The static accounts a transaction's header marks writable, base58. */
export function writableStaticAddresses(wire: WireTransaction): string[] {
  const accounts: string[] = [];
  wire.staticAccountKeys.forEach((key, index) => {
    if (isStaticWritable(wire, index)) accounts.push(bs58.encode(key));
  });
  return accounts;
}

function sampleOf(entry: unknown): FeeSample | string {
  const { transaction, meta } = (entry ?? {}) as { transaction?: unknown; meta?: unknown };
  if (!Array.isArray(transaction) || typeof transaction[0] !== 'string') return 'a transaction is not in base64';
  const wire = parseWireTransaction(Buffer.from(transaction[0], 'base64'));
  if (isWireDefect(wire)) return `a transaction does not parse: ${wire.detail}`;
  const accounts = writableStaticAddresses(wire);
  const loaded = (meta as { loadedAddresses?: { writable?: unknown } } | null | undefined)?.loadedAddresses?.writable;
  if (Array.isArray(loaded)) for (const address of loaded) if (typeof address === 'string') accounts.push(address);
  const vote = wire.instructions.some((ix) => wire.staticAccountKeys[ix.programIdIndex]?.equals(VOTE_PROGRAM) === true);
  const failed = (meta as { err?: unknown } | null | undefined)?.err != null;
  return {
    price: Number(computeBudgetOf(wire).unitPrice),
    accounts,
    vote,
    failed,
    tip: Number(tipOf([wire])),
    priority: Number(priorityAndCost(wire).priority),
  };
}

/**
 * What a block's landed transactions paid at the least, as a leader placed them: the lowest
 * priority and price of those that succeeded, votes left out, and tipped ones too (the block
 * engine's auction placed them by their tip); null when none.
 */
export function lowestLanded(samples: readonly FeeSample[]): { priority: number; price: number; count: number } | null {
  let [priority, price, count] = [Infinity, Infinity, 0];
  for (const sample of samples) {
    if (sample.vote || sample.failed || sample.tip > 0) continue;
    priority = Math.min(priority, sample.priority);
    price = Math.min(price, sample.price);
    count++;
  }
  return count === 0 ? null : { priority, price, count };
}
