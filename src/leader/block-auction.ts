/**
 * The block engine's auction, as Jito describes it (docs.jito.wtf, "Bundles": auctions every
 * 200 ms; bundles ranked by tip per compute unit; at least 1,000 lamports of tip; the engine
 * is closed source, so the rest is ours to choose and is written here). Without I/O or a
 * clock: the caller holds an auction when its leader runs the engine, and executes winners.
 *
 * - A bundle's **tip** is what its transactions transfer to the eight tip accounts with the
 *   system program's Transfer; its **rate** is tip × 1,000,000 / (its cost + 1), its cost the
 *   sum of its transactions' (Agave's cost model), as the scheduler ranks transactions.
 * - Each auction ranks the bids by rate (then the earlier first) and takes them in that order
 *   while they fit the room it is given (the bundles' share of the block, less what bundles
 *   took already in the slot); one that does not fit is passed over for smaller ones.
 * - A bid stays for AUCTION_ROUNDS auctions; one that has won none by then has lost, and is
 *   reported with the lowest rate that won an auction it was in.
 */
import bs58 from 'bs58';
import { JITO_TIP_ACCOUNTS } from '../core/jito-tip-accounts';
import type { WireTransaction } from '../validation/wire-transaction';

/** The engine's minimum tip (lamports). */
export const MIN_TIP_LAMPORTS = 1_000n;
/** Auctions a bundle takes part in before it has lost: a 400 ms slot's two. */
export const AUCTION_ROUNDS = 2;

const SYSTEM_PROGRAM = Buffer.alloc(32).toString('latin1');
const SYSTEM_TRANSFER = 2;
const TIP_ACCOUNTS = new Set(JITO_TIP_ACCOUNTS.map((account) => Buffer.from(bs58.decode(account)).toString('latin1')));

/** Lamports the transactions transfer to tip accounts (system Transfer to a static key). */
export function tipOf(wires: readonly WireTransaction[]): bigint {
  let tip = 0n;
  for (const wire of wires) {
    for (const ix of wire.instructions) {
      if (wire.staticAccountKeys[ix.programIdIndex]?.toString('latin1') !== SYSTEM_PROGRAM) continue;
      if (ix.data.length < 12 || ix.data.readUInt32LE(0) !== SYSTEM_TRANSFER || ix.accountIndexes.length < 2) continue;
      const to = wire.staticAccountKeys[ix.accountIndexes[1]!];
      if (to !== undefined && TIP_ACCOUNTS.has(to.toString('latin1'))) tip += ix.data.readBigUInt64LE(4);
    }
  }
  return tip;
}

export function bidRate(tip: bigint, cost: number): bigint {
  return (tip * 1_000_000n) / BigInt(cost + 1);
}

export interface Bid {
  readonly id: string;
  readonly tip: bigint;
  /** The sum of its transactions' costs. */
  readonly cost: number;
  readonly seq: number;
}

export interface AuctionResult<B extends Bid> {
  /** In the order they are to be executed: the highest rate first. */
  readonly winners: B[];
  /** Bids out of rounds, with the lowest rate that won an auction they were in (null: none won). */
  readonly lost: { readonly bid: B; readonly winningRate: bigint | null }[];
}

export class BlockAuction<B extends Bid> {
  private readonly bids = new Map<string, { bid: B; rate: bigint; roundsLeft: number; beatenBy: bigint | null }>();

  has(id: string): boolean {
    return this.bids.has(id);
  }

  get size(): number {
    return this.bids.size;
  }

  /** A bundle enters; a second copy of one already bidding changes nothing. */
  submit(bid: B): void {
    if (!this.bids.has(bid.id))
      this.bids.set(bid.id, { bid, rate: bidRate(bid.tip, bid.cost), roundsLeft: AUCTION_ROUNDS, beatenBy: null });
  }

  /** Takes out the bids `drop` says to; returns them. */
  withdrawWhere(drop: (bid: B) => boolean): B[] {
    const out: B[] = [];
    for (const [id, entry] of this.bids) {
      if (!drop(entry.bid)) continue;
      this.bids.delete(id);
      out.push(entry.bid);
    }
    return out;
  }

  /** Holds an auction for `room` units: the winners leave the auction; bids out of rounds leave as lost. */
  run(room: number): AuctionResult<B> {
    const ranked = [...this.bids.values()].sort((a, b) => (a.rate === b.rate ? a.bid.seq - b.bid.seq : a.rate > b.rate ? -1 : 1));
    const winners: B[] = [];
    let lowest: bigint | null = null;
    for (const entry of ranked) {
      if (entry.bid.cost > room) continue;
      room -= entry.bid.cost;
      winners.push(entry.bid);
      lowest = entry.rate;
      this.bids.delete(entry.bid.id);
    }
    const lost: { bid: B; winningRate: bigint | null }[] = [];
    for (const entry of this.bids.values()) {
      entry.roundsLeft -= 1;
      if (lowest !== null && (entry.beatenBy === null || lowest < entry.beatenBy)) entry.beatenBy = lowest;
      if (entry.roundsLeft > 0) continue;
      lost.push({ bid: entry.bid, winningRate: entry.beatenBy });
      this.bids.delete(entry.bid.id);
    }
    return { winners, lost };
  }
}
