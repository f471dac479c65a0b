/**
 * The seam between Slipway's pipeline and the network: one small interface that every
 * route implements (the embedded ledger here; Solana RPC nodes and Jito block engines
 * later). The router picks upstreams; nothing outside the composition root names an adapter.
 */
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { TransactionErrorJson } from '../ledger/transaction-error';

/** Solana's send options, as `sendTransaction`'s `params[1]` carries them. */
export interface SendOptions {
  readonly skipPreflight: boolean;
  readonly preflightCommitment: 'processed' | 'confirmed' | 'finalized';
  readonly maxRetries: number | undefined;
  readonly minContextSlot: number | undefined;
}

/** A preflight result: `err` null when the transaction would succeed. */
export interface SimulationResult {
  readonly err: TransactionErrorJson | null;
  readonly errText: string | null;
  readonly logs: string[];
  readonly unitsConsumed: number;
  /** The slot the simulation ran at, for `minContextSlot`. */
  readonly slot: number;
}

/** `dropped` names why, when the route knows at once that the transaction will never land. */
export interface SendOutcome {
  readonly dropped: string | null;
}

export type BundleSendResult =
  | { readonly accepted: true }
  | {
      readonly accepted: false;
      readonly failedIndex: number;
      readonly err: TransactionErrorJson | null;
      readonly errText: string;
      readonly logs: string[];
    };

/** The answer of a JSON-RPC method the upstream serves directly (reads, statuses). */
export type RpcAnswer = { readonly result: unknown } | { readonly error: { code: number; message: string; data?: unknown } };

export interface Upstream {
  readonly name: string;
  /** Whether the route exposes transactions to no one but the block producer (for anti-MEV). */
  readonly protected: boolean;
  /** Current slot as the upstream sees it. */
  getSlot(): Promise<number>;
  simulate(tx: ValidatedTransaction): Promise<SimulationResult>;
  /** Forwards one transaction; it may still fail on chain (its status tells). */
  sendTransaction(tx: ValidatedTransaction, options: SendOptions): Promise<SendOutcome>;
  /** Forwards a bundle; `accepted: false` when the route knows at once that it was rejected whole. */
  sendBundle(bundleId: string, txs: readonly ValidatedTransaction[]): Promise<BundleSendResult>;
  /** Answers a JSON-RPC method Slipway does not handle itself, or undefined if it does not know it. */
  call(method: string, params: readonly unknown[]): Promise<RpcAnswer | undefined>;
  close(): Promise<void>;
}
