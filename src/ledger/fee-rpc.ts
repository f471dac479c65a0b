/**
 * Fee reads on the local ledgers, in Agave's shapes: `getFeeForMessage` (what a message
 * would pay, null once its blockhash has expired) and `getRecentPrioritizationFees` (per
 * recent slot, the lowest compute unit price paid, raised to the lowest paid by
 * transactions writing the given accounts), from the ledger's recent blocks.
 */
import bs58 from 'bs58';
import type { RpcAnswer } from '../core/rpc-types';
import { decodeStrictBase64 } from '../validation/strict-base64';
import {
  MAX_BASE64_SIZE,
  isWireDefect,
  parseWireTransaction,
  usesDurableNonce,
  type WireTransaction,
} from '../validation/wire-transaction';
import { computeBudgetOf, feeOf, isStaticWritable } from '../leader/compute-budget';
import { MAX_PROCESSING_AGE } from './local-ledger';
import { invalidParams, isAnswer, parseAddress, withContext, type Method } from './rpc-shapes';

/** Agave's limit on the accounts `getRecentPrioritizationFees` takes (MAX_TX_ACCOUNT_LOCKS). */
const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;
/** Slots a node's prioritization fee cache holds. */
const PRIORITIZATION_FEE_SLOTS = MAX_PROCESSING_AGE;

/** A Base64 message parsed as the unsigned transaction it would head (its signatures zero). */
function parseMessage(value: unknown): WireTransaction | RpcAnswer {
  if (typeof value !== 'string') return invalidParams('params[0] must be the message, a base64 string');
  if (value.length > MAX_BASE64_SIZE)
    return invalidParams(`base64 encoded message too large: ${value.length} bytes (max: ${MAX_BASE64_SIZE})`);
  const decoded = decodeStrictBase64(value);
  if (!decoded.ok) return invalidParams(decoded.error.message);
  const message = decoded.value;
  if (message.length === 0) return invalidParams('failed to deserialize the message: it is empty');
  // A v0 message starts with 0x80; its header follows. The header's first byte: signatures required.
  const required = (message[0]! & 0x80) !== 0 ? message[1] : message[0];
  if (required === undefined || required > 127) return invalidParams('failed to deserialize the message: invalid header');
  const wire = parseWireTransaction(Buffer.concat([Buffer.from([required]), Buffer.alloc(64 * required), message]));
  if (isWireDefect(wire)) return invalidParams(`invalid message: ${wire.detail}`);
  return wire;
}

/** The writable accounts of a landed transaction (latin1 keys), static and loaded. */
function writableAccounts(wire: WireTransaction, loadedWritable: readonly string[]): Set<string> {
  const writable = new Set<string>();
  wire.staticAccountKeys.forEach((key, index) => {
    if (isStaticWritable(wire, index)) writable.add(key.toString('latin1'));
  });
  for (const address of loadedWritable) writable.add(Buffer.from(bs58.decode(address)).toString('latin1'));
  return writable;
}

export const FEE_RPC_METHODS: Record<string, Method> = {
  getFeeForMessage: (ledger, params) => {
    const wire = parseMessage(params[0]);
    if (isAnswer(wire)) return wire;
    const current = usesDurableNonce(wire) || ledger.isBlockhashValid(bs58.encode(wire.recentBlockhash));
    return withContext(ledger, current ? Number(feeOf(wire)) : null);
  },

  getRecentPrioritizationFees: (ledger, params) => {
    const list = params[0] ?? [];
    if (!Array.isArray(list)) return invalidParams('params[0] must be an array of base58 account addresses');
    if (list.length > MAX_PRIORITIZATION_FEE_ACCOUNTS)
      return invalidParams(`Too many inputs provided; max ${MAX_PRIORITIZATION_FEE_ACCOUNTS}`);
    const accounts: string[] = [];
    for (const value of list) {
      const address = parseAddress(value);
      if (isAnswer(address)) return address;
      accounts.push(Buffer.from(address).toString('latin1'));
    }
    const fees: { slot: number; prioritizationFee: number }[] = [];
    for (let slot = Math.max(0, ledger.currentSlot - PRIORITIZATION_FEE_SLOTS + 1); slot <= ledger.currentSlot; slot++) {
      const block = ledger.history.block(slot);
      if (block === undefined) continue;
      let blockMin: bigint | undefined;
      const accountMin = new Map<string, bigint>();
      for (const signature of block.signatures) {
        const landed = ledger.history.transaction(signature);
        const wire = landed === undefined ? undefined : parseWireTransaction(landed.wire);
        if (landed === undefined || wire === undefined || isWireDefect(wire)) continue;
        const price = computeBudgetOf(wire).unitPrice;
        blockMin = blockMin === undefined || price < blockMin ? price : blockMin;
        for (const account of writableAccounts(wire, landed.loadedAddresses.writable)) {
          const known = accountMin.get(account);
          if (known === undefined || price < known) accountMin.set(account, price);
        }
      }
      let fee = blockMin ?? 0n;
      for (const account of accounts) {
        const accountFee = accountMin.get(account);
        if (accountFee !== undefined && accountFee > fee) fee = accountFee;
      }
      fees.push({ slot, prioritizationFee: Number(fee) });
    }
    return { result: fees };
  },
};
