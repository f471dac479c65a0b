/** What the local ledgers' JSON-RPC methods share: Agave's answer shapes, parameter parsing, account encoding. */
import bs58 from 'bs58';
import type { RpcAnswer } from '../core/rpc-types';
import { SOLANA_CORE_VERSION } from './cluster-nodes';
import type { AccountView, LocalLedger } from './local-ledger';

export const API_VERSION = SOLANA_CORE_VERSION;

export type Method = (ledger: LocalLedger, params: readonly unknown[]) => RpcAnswer;

export const invalidParams = (message: string): RpcAnswer => ({ error: { code: -32602, message } });

/** An answer (rather than a parsed value) from one of the parsers below. */
export const isAnswer = (value: unknown): value is RpcAnswer =>
  value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && ('result' in value || 'error' in value);

/** An answer with Agave's `{ context, value }` wrapper. */
export function withContext(ledger: LocalLedger, value: unknown): RpcAnswer {
  return { result: { context: { slot: ledger.currentSlot, apiVersion: API_VERSION }, value } };
}

/** A base58 address, with Agave's messages for what is not one. */
export function parseAddress(value: unknown): Uint8Array | RpcAnswer {
  if (typeof value !== 'string') return invalidParams('Invalid param: expected a base58 address string');
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    return invalidParams('Invalid param: Invalid');
  }
  return bytes.length === 32 ? bytes : invalidParams('Invalid param: WrongSize');
}

/** An account as `getAccountInfo` shows it: base64 data unless base58 is asked for. */
export function encodeAccount(account: AccountView, encoding: unknown): unknown {
  const data = encoding === 'base58' ? [bs58.encode(account.data), 'base58'] : [Buffer.from(account.data).toString('base64'), 'base64'];
  return {
    data,
    executable: account.executable,
    lamports: Number(account.lamports),
    owner: bs58.encode(account.owner),
    // u64::MAX (rent-exempt for good), which a JSON number read as a double holds as 2^64.
    rentEpoch: Number.MAX_SAFE_INTEGER < account.rentEpoch ? 2 ** 64 : Number(account.rentEpoch),
    space: account.data.length,
  };
}

/** A parameter named in a refusal: short, and never anything that could run code or flood a log. */
export function describeParam(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : `a value of type ${typeof value}`;
}

/** params[index] as a configuration object ({} when absent or not an object). */
export function configOf(params: readonly unknown[], index: number): Record<string, unknown> {
  const value = params[index];
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
