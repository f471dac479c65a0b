/** Solana's JSON-RPC shapes that several layers read and write: send options, simulation results, statuses, answers. */
import type { TransactionErrorJson } from './transaction-error';

/** Solana's send options, as `sendTransaction`'s `params[1]` carries them. */
export interface SendOptions {
  readonly skipPreflight: boolean;
  readonly preflightCommitment: 'processed' | 'confirmed' | 'finalized';
  readonly maxRetries: number | undefined;
  readonly minContextSlot: number | undefined;
  /** Routes that pick leaders (the TPU) send only to these: anti-MEV's trusted leaders of the safe window. */
  readonly leaders?: readonly string[];
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

/** A signature's status as `getSignatureStatuses` reports it. */
export interface SignatureStatusView {
  readonly slot: number;
  readonly confirmations: number | null;
  readonly err: TransactionErrorJson | null;
  readonly confirmationStatus: 'processed' | 'confirmed' | 'finalized' | null;
}

/** The answer of a JSON-RPC method the upstream serves directly (reads, statuses). */
export type RpcAnswer = { readonly result: unknown } | { readonly error: { code: number; message: string; data?: unknown } };
