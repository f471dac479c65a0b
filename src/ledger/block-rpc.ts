/**
 * `getBlock` and `getTransaction` on the embedded ledger, in Solana's shapes, from its
 * recent history (block-history.ts). A block's producer is where a cluster says it: the
 * `Fee` reward of its `rewards` goes to the slot's leader (half the fees, the other half
 * burnt). Encodings `json` (default), `base64` and `base58`; `jsonParsed` is refused.
 */
import bs58 from 'bs58';
import type { RpcAnswer } from '../core/rpc-types';
import { parseWireTransaction, isWireDefect } from '../validation/wire-transaction';
import type { LandedTransaction } from './block-history';
import { executedCost, transactionCost } from '../leader/cost-model';
import { CONFIRMED_DEPTH, FINALIZED_DEPTH } from './local-ledger';
import { describeParam, invalidParams, isAnswer, parseAddress, type Method } from './rpc-shapes';

const ENCODINGS = new Set(['json', 'base64', 'base58']);
const DETAILS = new Set(['full', 'signatures', 'none']);

function configOf(value: unknown): Record<string, unknown> | string {
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') return { encoding: value }; // the old positional encoding
  if (typeof value !== 'object' || Array.isArray(value)) return 'params[1] must be a configuration object';
  return value as Record<string, unknown>;
}

function encodingOf(config: Record<string, unknown>): string | RpcAnswer {
  const encoding = config.encoding ?? 'json';
  if (encoding === 'jsonParsed')
    return invalidParams('encoding jsonParsed is not supported by the embedded ledger; use json, base64 or base58');
  if (typeof encoding !== 'string' || !ENCODINGS.has(encoding))
    return invalidParams(`unknown encoding ${describeParam(encoding)}; use json, base64 or base58`);
  return encoding;
}

/** Agave's refusal of a versioned transaction to a client that did not say it reads them. */
function unsupportedVersion(landed: LandedTransaction, config: Record<string, unknown>): RpcAnswer | undefined {
  if (
    landed.version === 'legacy' ||
    (typeof config.maxSupportedTransactionVersion === 'number' && config.maxSupportedTransactionVersion >= 0)
  )
    return undefined;
  return {
    error: {
      code: -32015,
      message:
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    },
  };
}

function encodeTransaction(landed: LandedTransaction, encoding: string): unknown {
  if (encoding === 'base64') return [landed.wire.toString('base64'), 'base64'];
  if (encoding === 'base58') return [bs58.encode(landed.wire), 'base58'];
  const wire = parseWireTransaction(landed.wire);
  if (isWireDefect(wire)) throw new Error(`a landed transaction does not parse: ${wire.detail}`);
  return {
    signatures: wire.signatures.map((signature) => bs58.encode(signature)),
    message: {
      header: {
        numRequiredSignatures: wire.numRequiredSignatures,
        numReadonlySignedAccounts: wire.numReadonlySigned,
        numReadonlyUnsignedAccounts: wire.numReadonlyUnsigned,
      },
      accountKeys: wire.staticAccountKeys.map((key) => bs58.encode(key)),
      recentBlockhash: bs58.encode(wire.recentBlockhash),
      instructions: wire.instructions.map((ix) => ({
        programIdIndex: ix.programIdIndex,
        accounts: [...ix.accountIndexes],
        data: bs58.encode(ix.data),
        stackHeight: null,
      })),
      ...(wire.version === 0
        ? {
            addressTableLookups: wire.addressTableLookups.map((l) => ({
              accountKey: bs58.encode(l.tableAddress),
              writableIndexes: [...l.writableIndexes],
              readonlyIndexes: [...l.readonlyIndexes],
            })),
          }
        : {}),
    },
  };
}

function costUnitsOf(landed: LandedTransaction): number {
  const wire = parseWireTransaction(landed.wire);
  if (isWireDefect(wire)) throw new Error(`a landed transaction does not parse: ${wire.detail}`);
  return executedCost(transactionCost(wire), landed.unitsConsumed, landed.loadedAccountsBytes);
}

function metaOf(landed: LandedTransaction): unknown {
  return {
    err: landed.err,
    status: landed.err === null ? { Ok: null } : { Err: landed.err },
    fee: landed.fee,
    preBalances: landed.preBalances,
    postBalances: landed.postBalances,
    // Not recorded by the embedded ledger (null, as nodes answer for history without them).
    innerInstructions: null,
    logMessages: landed.logs,
    preTokenBalances: [],
    postTokenBalances: [],
    rewards: [],
    loadedAddresses: landed.loadedAddresses,
    computeUnitsConsumed: landed.unitsConsumed,
    // What it cost the block, as Agave's meta says (the cost model with the units it used).
    costUnits: costUnitsOf(landed),
  };
}

const withVersion = (landed: LandedTransaction, config: Record<string, unknown>) =>
  config.maxSupportedTransactionVersion === undefined ? {} : { version: landed.version };

/** Agave's limit on `getSignaturesForAddress`. */
const MAX_SIGNATURES_FOR_ADDRESS = 1_000;
const MEMO_PROGRAMS = new Set(['MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr', 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo']);

/** Agave's `memo` field: each memo instruction's text as `[length] text`, joined with "; "; null when none. */
function memoOf(landed: LandedTransaction): string | null {
  const wire = parseWireTransaction(landed.wire);
  if (isWireDefect(wire)) return null;
  const memos = wire.instructions
    .filter((ix) => MEMO_PROGRAMS.has(bs58.encode(wire.staticAccountKeys[ix.programIdIndex] ?? Buffer.alloc(0))))
    .map((ix) => `[${ix.data.length}] ${ix.data.toString('utf8')}`);
  return memos.length === 0 ? null : memos.join('; ');
}

/** Whether a landed transaction loads `address` (latin1), statically or from a lookup table. */
function mentions(landed: LandedTransaction, address: Uint8Array, base58: string): boolean {
  const wire = parseWireTransaction(landed.wire);
  if (!isWireDefect(wire) && wire.staticAccountKeys.some((key) => key.equals(address))) return true;
  return landed.loadedAddresses.writable.includes(base58) || landed.loadedAddresses.readonly.includes(base58);
}

export const BLOCK_RPC_METHODS: Record<string, Method> = {
  /**
   * Newest first, from the transactions the ledger still keeps (the last 10,000): a node
   * without long-term storage answers the same way. Commitment `confirmed` (the default)
   * or `finalized`, as on Agave (`processed` is refused).
   */
  getSignaturesForAddress: (ledger, params) => {
    const address = parseAddress(params[0]);
    if (isAnswer(address)) return address;
    const config = configOf(params[1]);
    if (typeof config === 'string') return invalidParams(config);
    const limit = config.limit ?? MAX_SIGNATURES_FOR_ADDRESS;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SIGNATURES_FOR_ADDRESS)
      return invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`);
    for (const bound of ['before', 'until'] as const) {
      if (config[bound] !== undefined && typeof config[bound] !== 'string')
        return invalidParams(`${bound} must be a transaction signature (base58 string)`);
    }
    const commitment = config.commitment ?? 'confirmed';
    if (commitment === 'processed') return invalidParams('Method does not support commitment below `confirmed`');
    if (commitment !== 'confirmed' && commitment !== 'finalized') return invalidParams('commitment must be confirmed or finalized');
    const minContextSlot = config.minContextSlot;
    if (typeof minContextSlot === 'number' && ledger.currentSlot < minContextSlot) {
      return { error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: ledger.currentSlot } } };
    }
    const depth = commitment === 'finalized' ? FINALIZED_DEPTH : CONFIRMED_DEPTH;
    const base58 = params[0] as string;
    const found: unknown[] = [];
    let started = config.before === undefined;
    for (const [signature, landed] of ledger.history.newestFirst()) {
      if (!started) {
        started = signature === config.before;
        continue;
      }
      if (signature === config.until || found.length >= limit) break;
      if (ledger.currentSlot - landed.slot < depth || !mentions(landed, address, base58)) continue;
      found.push({
        signature,
        slot: landed.slot,
        err: landed.err,
        memo: memoOf(landed),
        blockTime: ledger.history.block(landed.slot)?.blockTime ?? null,
        confirmationStatus: ledger.currentSlot - landed.slot >= FINALIZED_DEPTH ? 'finalized' : 'confirmed',
      });
    }
    return { result: found };
  },

  getTransaction: (ledger, params) => {
    if (typeof params[0] !== 'string') return invalidParams('params[0] must be a transaction signature (base58 string)');
    const config = configOf(params[1]);
    if (typeof config === 'string') return invalidParams(config);
    const encoding = encodingOf(config);
    if (typeof encoding !== 'string') return encoding;
    const landed = ledger.history.transaction(params[0]);
    if (landed === undefined) return { result: null };
    const refused = unsupportedVersion(landed, config);
    if (refused !== undefined) return refused;
    return {
      result: {
        slot: landed.slot,
        blockTime: ledger.history.block(landed.slot)?.blockTime ?? null,
        transaction: encodeTransaction(landed, encoding),
        meta: metaOf(landed),
        ...withVersion(landed, config),
      },
    };
  },

  getBlock: (ledger, params) => {
    const slot = params[0];
    if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0)
      return invalidParams('params[0] must be a slot (a non-negative integer)');
    const config = configOf(params[1]);
    if (typeof config === 'string') return invalidParams(config);
    const encoding = encodingOf(config);
    if (typeof encoding !== 'string') return encoding;
    const details = config.transactionDetails ?? 'full';
    if (typeof details !== 'string' || !DETAILS.has(details))
      return invalidParams(`transactionDetails must be full, signatures or none (accounts is not supported by the embedded ledger)`);
    const commitment = config.commitment ?? 'confirmed';
    if (commitment === 'processed') return invalidParams('Method does not support commitment below `confirmed`');
    if (commitment !== 'confirmed' && commitment !== 'finalized') return invalidParams('commitment must be confirmed or finalized');
    // The slot being produced is not a block yet (its leader is still packing it), nor one not
    // yet as deep as the commitment asks: served, a reader would take a part for the whole.
    const depth = commitment === 'finalized' ? FINALIZED_DEPTH : CONFIRMED_DEPTH;
    if (slot > ledger.currentSlot - depth) return { error: { code: -32004, message: `Block not available for slot ${slot}` } };
    const block = ledger.history.block(slot);
    const landed = block?.signatures.map((signature) => ({ signature, landed: ledger.history.transaction(signature) }));
    // A block some of whose transactions the history has forgotten is gone as a whole, as on a
    // node that cleaned it up: served, it would be a smaller block than the one produced.
    if (block === undefined || (details === 'full' && landed!.some(({ landed: tx }) => tx === undefined))) {
      return {
        error: {
          code: -32001,
          message: `Block ${slot} cleaned up, does not exist on node. First available block: ${ledger.history.firstCompleteSlot ?? ledger.currentSlot}`,
        },
      };
    }
    if (details === 'full') {
      for (const { landed: tx } of landed!) {
        const refused = tx === undefined ? undefined : unsupportedVersion(tx, config);
        if (refused !== undefined) return refused;
      }
    }
    const leader = ledger.schedule.leaderAt(slot);
    // The leader's share, as a cluster reports it; the embedded ledger credits it to no account.
    const rewarded = Math.floor(block.fees / 2);
    const leaderBalance = Number(ledger.getAccount(bs58.decode(leader))?.lamports ?? 0n);
    return {
      result: {
        blockhash: block.blockhash,
        previousBlockhash: ledger.history.block(slot - 1)?.blockhash ?? block.blockhash,
        parentSlot: slot - 1,
        blockHeight: slot,
        blockTime: block.blockTime,
        ...(details === 'full'
          ? {
              transactions: landed!.flatMap(({ landed: tx }) =>
                tx === undefined ? [] : [{ transaction: encodeTransaction(tx, encoding), meta: metaOf(tx), ...withVersion(tx, config) }],
              ),
            }
          : details === 'signatures'
            ? { signatures: block.signatures }
            : {}),
        ...(config.rewards === false
          ? {}
          : { rewards: [{ pubkey: leader, lamports: rewarded, postBalance: leaderBalance, rewardType: 'Fee', commission: null }] }),
      },
    };
  },
};
