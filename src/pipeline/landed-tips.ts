/**
 * Where the tips of landed bundles go: one small seam between what sees bundles land (the
 * tracker, today) and what makes a tip floor of them (advice/tip-floor.ts), so that either
 * side can change — another feed (the journal's outcomes), another reader — without the other.
 */
import { tipOf } from '../leader/block-auction';
import type { ValidatedTransaction } from '../validation/validate-transaction';

/** Told of each landed bundle that paid a tip. */
export interface LandedTips {
  /** A bundle that tipped `lamports` landed at `atMs` (epoch ms). */
  record(lamports: number, atMs: number): void;
}

/**
 * What a bundle's transactions transfer to Jito's tip accounts (system transfers to a static
 * key, block-auction.ts's `tipOf`), in lamports; computed once, when the bundle is accepted or
 * followed again after a restart, never on a transaction's path. A tip paid otherwise (by a
 * program, or to an account named through a lookup table) is not seen, and counts as none.
 */
export function bundleTipLamports(txs: readonly ValidatedTransaction[]): number {
  return Number(tipOf(txs.map((tx) => tx.wire)));
}
