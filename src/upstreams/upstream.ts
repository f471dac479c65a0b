/**
 * The seam between Slipway's pipeline and the network: one small interface that every
 * route implements (the embedded ledger, Solana RPC nodes, Jito block engines). The router
 * picks upstreams; nothing outside the composition root names an adapter.
 *
 * Methods throw when the upstream cannot be reached or used (with a reason in words); a
 * refusal or outcome the upstream reports is a value.
 */
import type { TransactionErrorJson } from '../core/transaction-error';
import type { RpcAnswer, SendOptions, SignatureStatusView, SimulationResult } from '../core/rpc-types';

export type { RpcAnswer, SendOptions, SignatureStatusView, SimulationResult } from '../core/rpc-types';
import type { ValidatedTransaction } from '../validation/validate-transaction';

/** `dropped` names why, when the route knows at once that the transaction will never land. */
export interface SendOutcome {
  readonly dropped: string | null;
  /** The leaders it was handed to and their addresses, for routes that pick leaders (the TPU). */
  readonly contacted?: readonly { readonly leader: string; readonly address: string }[];
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

/** A bundle's state as `getInflightBundleStatuses` reports it, with the reason where known. */
export interface BundleStatusView {
  readonly status: 'Invalid' | 'Pending' | 'Failed' | 'Landed';
  readonly landedSlot: number | null;
  readonly reason: string | null;
}

export type UpstreamKind = 'embedded' | 'rpc' | 'jito' | 'tpu' | 'sink';

export interface Upstream {
  readonly name: string;
  readonly kind: UpstreamKind;
  /** Whether the route exposes transactions to no one but the block producer (for anti-MEV). */
  readonly protected: boolean;
  /** Whether it can simulate transactions (preflight); block engines cannot. */
  readonly simulates: boolean;
  /** Whether Slipway follows what it takes until it lands (false only for the benchmark's sink). */
  readonly tracked: boolean;
  /** Current slot as the upstream sees it. */
  getSlot(): Promise<number>;
  simulate(tx: ValidatedTransaction): Promise<SimulationResult>;
  /** Forwards one transaction (once: rebroadcast is the tracker's); it may still fail on chain. */
  sendTransaction(tx: ValidatedTransaction, options: SendOptions): Promise<SendOutcome>;
  /** Why this upstream would refuse the bundle before sending it (e.g. no tip), or null. */
  admitBundle(txs: readonly ValidatedTransaction[]): Promise<string | null>;
  /** Forwards a bundle; `accepted: false` when the route knows at once that it was rejected whole. */
  sendBundle(bundleId: string, txs: readonly ValidatedTransaction[]): Promise<BundleSendResult>;
  /** Answers a JSON-RPC method Slipway does not handle itself, or undefined if it does not know it. */
  call(method: string, params: readonly unknown[]): Promise<RpcAnswer | undefined>;
  /** Statuses of up to 256 signatures, null where unknown. */
  getSignatureStatuses(signatures: readonly string[]): Promise<(SignatureStatusView | null)[]>;
  /** States of up to 5 bundles sent through this upstream. */
  getBundleStatuses(bundleIds: readonly string[]): Promise<BundleStatusView[]>;
  isBlockhashValid(blockhash: string): Promise<boolean>;
  close(): Promise<void>;
}
