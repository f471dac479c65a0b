/**
 * The read side of the embedded ledger in Solana's JSON-RPC shapes (and Jito's, for bundle
 * statuses), so that real clients (@solana/web3.js, @solana/kit, Jito's) can build, send
 * and confirm against it. Each method takes the raw `params` array and answers a result or
 * an error the way an Agave node does.
 */
import { BLOCK_RPC_METHODS } from './block-rpc';
import { FEE_RPC_METHODS } from './fee-rpc';
import { TOKEN_RPC_METHODS } from './token-rpc';
import type { RpcAnswer, SignatureStatusView } from '../core/rpc-types';
import { JITO_TIP_ACCOUNTS } from '../core/jito-tip-accounts';
import { SLOTS_PER_EPOCH } from './leader-schedule';
import { CONFIRMED_DEPTH, FINALIZED_DEPTH, type LocalLedger, type SignatureStatus } from './local-ledger';
import { SOLANA_CORE_VERSION } from './cluster-nodes';
import { configOf, encodeAccount, invalidParams, isAnswer, parseAddress, withContext, type Method } from './rpc-shapes';
import { simulateBundle } from './simulate-bundle-rpc';
import { simulateTransaction } from './simulate-rpc';

const MAX_SIGNATURE_STATUSES = 256;
/** Agave's limit on `getMultipleAccounts`. */
const MAX_MULTIPLE_ACCOUNTS = 100;
/** Agave's limit on `getSlotLeaders`. */
const MAX_SLOT_LEADERS = 5_000;
const MAX_BUNDLE_IDS = 5;
/** Solana's MAX_PERMITTED_DATA_LENGTH: 10 MiB. */
const MAX_ACCOUNT_DATA_LENGTH = 10 * 1024 * 1024;

function confirmationOf(
  ledger: LocalLedger,
  slot: number,
): { confirmations: number | null; confirmationStatus: 'processed' | 'confirmed' | 'finalized' } {
  const depth = ledger.currentSlot - slot;
  if (depth >= FINALIZED_DEPTH) return { confirmations: null, confirmationStatus: 'finalized' };
  return { confirmations: depth, confirmationStatus: depth >= CONFIRMED_DEPTH ? 'confirmed' : 'processed' };
}

/** A status in `getSignatureStatuses`' shape, confirmation by slot depth. */
export function signatureStatusView(ledger: LocalLedger, status: SignatureStatus): SignatureStatusView {
  return { slot: status.slot, ...confirmationOf(ledger, status.slot), err: status.err };
}

/** params[0] as a list of signatures, at most MAX_SIGNATURE_STATUSES, as Agave limits `getSignatureStatuses`. */
function signaturesOf(params: readonly unknown[]): string[] | RpcAnswer {
  const signatures = params[0];
  if (!Array.isArray(signatures) || signatures.some((s) => typeof s !== 'string')) {
    return invalidParams('params[0] must be an array of base58 signature strings');
  }
  if (signatures.length > MAX_SIGNATURE_STATUSES) return invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
  return signatures as string[];
}

function bundleIdsOf(params: readonly unknown[]): string[] | RpcAnswer {
  const ids = params[0];
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
    return invalidParams('params[0] must be an array of bundle ID strings');
  }
  if (ids.length > MAX_BUNDLE_IDS) return invalidParams(`params[0] has ${ids.length} bundle IDs; at most ${MAX_BUNDLE_IDS}`);
  return ids as string[];
}

export const LEDGER_RPC_METHODS: Record<string, Method> = {
  ...BLOCK_RPC_METHODS,
  ...FEE_RPC_METHODS,
  ...TOKEN_RPC_METHODS,
  simulateTransaction,
  // Jito-Solana's RPC method, on the node (`/`) as there: block engines do not simulate.
  simulateBundle,
  getHealth: () => ({ result: 'ok' }),
  getVersion: () => ({ result: { 'solana-core': SOLANA_CORE_VERSION, 'feature-set': 0 } }),
  getSlot: (ledger) => ({ result: ledger.currentSlot }),
  getBlockHeight: (ledger) => ({ result: ledger.blockHeight }),
  getEpochInfo: (ledger) => ({
    result: {
      absoluteSlot: ledger.currentSlot,
      blockHeight: ledger.blockHeight,
      epoch: Math.floor(ledger.currentSlot / SLOTS_PER_EPOCH),
      slotIndex: ledger.currentSlot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: ledger.transactionCount,
    },
  }),
  /** The validators and their addresses, in Agave's RpcContactInfo shape (cluster-nodes.ts). */
  getClusterNodes: (ledger) => ({ result: ledger.clusterNodes.list() }),
  getSlotLeader: (ledger) => ({ result: ledger.schedule.leaderAt(ledger.currentSlot) }),
  getSlotLeaders: (ledger, params) => {
    const [start, limit] = params;
    if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0)
      return invalidParams('params[0] must be the first slot, a non-negative integer');
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SLOT_LEADERS) {
      return invalidParams(`Invalid limit; max ${MAX_SLOT_LEADERS}`);
    }
    return { result: ledger.schedule.leaders(start, limit) };
  },
  getLeaderSchedule: (ledger, params) => {
    // Either [slot | null, config?] or [config], as Agave takes it.
    const slotParam = typeof params[0] === 'object' ? null : params[0];
    const config = typeof params[0] === 'object' && params[0] !== null ? configOf(params, 0) : configOf(params, 1);
    if (
      slotParam !== undefined &&
      slotParam !== null &&
      (typeof slotParam !== 'number' || !Number.isSafeInteger(slotParam) || slotParam < 0)
    ) {
      return invalidParams('params[0] must be a slot (a non-negative integer) or null');
    }
    if (config.identity !== undefined && typeof config.identity !== 'string') return invalidParams('identity must be a base58 string');
    const slot = (slotParam as number | null | undefined) ?? ledger.currentSlot;
    // A node knows the schedule of the current epoch and the next one only.
    if (ledger.schedule.epochOf(slot) > ledger.schedule.epochOf(ledger.currentSlot) + 1) return { result: null };
    return { result: ledger.schedule.epochSchedule(slot, config.identity as string | undefined) };
  },
  /**
   * Not a Solana method: the local cluster's record of who saw each landed transaction
   * (slot, its leader, the path it came by, every leader it was exposed to, and the first
   * of them that sandwiches), for tests that measure exposure. null: not landed here.
   */
  getTransactionExposure: (ledger, params) => {
    const signatures = signaturesOf(params);
    if (!Array.isArray(signatures)) return signatures;
    return withContext(
      ledger,
      signatures.map((signature) => ledger.getExposure(signature) ?? null),
    );
  },
  // Not a Solana method: a slot's production under contention (block-producer.ts), for tests; null without contention.
  getSlotStats: (ledger, params) => {
    const slot = params[0];
    if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0)
      return invalidParams('params[0] must be a slot (an integer from 0)');
    return { result: ledger.slotStats(slot) ?? null };
  },
  getLatestBlockhash: (ledger) => withContext(ledger, ledger.latestBlockhash()),
  isBlockhashValid: (ledger, params) => {
    if (typeof params[0] !== 'string') return invalidParams('params[0] must be a base58 blockhash string');
    return withContext(ledger, ledger.isBlockhashValid(params[0]));
  },
  getBalance: (ledger, params) => {
    const address = parseAddress(params[0]);
    if (isAnswer(address)) return address;
    return withContext(ledger, Number(ledger.getAccount(address)?.lamports ?? 0n));
  },
  getAccountInfo: (ledger, params) => {
    const address = parseAddress(params[0]);
    if (isAnswer(address)) return address;
    const account = ledger.getAccount(address);
    return withContext(ledger, account === null ? null : encodeAccount(account, configOf(params, 1).encoding));
  },
  getMultipleAccounts: (ledger, params) => {
    if (!Array.isArray(params[0])) return invalidParams('params[0] must be an array of base58 addresses');
    if (params[0].length > MAX_MULTIPLE_ACCOUNTS) return invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
    const encoding = configOf(params, 1).encoding;
    const accounts: unknown[] = [];
    for (const value of params[0]) {
      const address = parseAddress(value);
      if (isAnswer(address)) return address;
      const account = ledger.getAccount(address);
      accounts.push(account === null ? null : encodeAccount(account, encoding));
    }
    return withContext(ledger, accounts);
  },
  getMinimumBalanceForRentExemption: (ledger, params) => {
    const length = params[0];
    // No account may hold more (Solana's MAX_PERMITTED_DATA_LENGTH); far larger lengths overflow the rent arithmetic.
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || length > MAX_ACCOUNT_DATA_LENGTH) {
      return invalidParams(
        `params[0] must be the account data length, an integer from 0 to ${MAX_ACCOUNT_DATA_LENGTH} (the largest account Solana allows)`,
      );
    }
    return { result: Number(ledger.minimumBalanceForRentExemption(length)) };
  },
  getSignatureStatuses: (ledger, params) => {
    const signatures = signaturesOf(params);
    if (!Array.isArray(signatures)) return signatures;
    return withContext(
      ledger,
      signatures.map((signature) => {
        const status = ledger.getSignatureStatus(signature);
        if (status === undefined) return null;
        return { ...signatureStatusView(ledger, status), status: status.err === null ? { Ok: null } : { Err: status.err } };
      }),
    );
  },
  requestAirdrop: (ledger, params) => {
    const address = parseAddress(params[0]);
    if (isAnswer(address)) return address;
    const lamports = params[1];
    if (typeof lamports !== 'number' || !Number.isSafeInteger(lamports) || lamports <= 0) {
      return invalidParams('params[1] must be the number of lamports, a positive integer');
    }
    const result = ledger.airdrop(address, BigInt(lamports));
    // The request cannot be carried out (a sysvar, below rent exemption, more than the faucet holds): the caller's to change.
    return 'signature' in result
      ? { result: result.signature }
      : invalidParams(`the airdrop of ${lamports} lamports to ${params[0] as string} failed: ${result.error}`);
  },
  getTipAccounts: () => ({ result: JITO_TIP_ACCOUNTS }),
  getBundleStatuses: (ledger, params) => {
    const ids = bundleIdsOf(params);
    if (!Array.isArray(ids)) return ids;
    return withContext(
      ledger,
      ids.map((bundleId) => {
        const bundle = ledger.getBundle(bundleId);
        if (bundle === undefined || !bundle.landed) return null;
        return {
          bundle_id: bundleId,
          transactions: bundle.signatures,
          slot: bundle.slot,
          confirmation_status: confirmationOf(ledger, bundle.slot).confirmationStatus,
          err: { Ok: null },
        };
      }),
    );
  },
  getInflightBundleStatuses: (ledger, params) => {
    const ids = bundleIdsOf(params);
    if (!Array.isArray(ids)) return ids;
    return withContext(
      ledger,
      ids.map((bundleId) => {
        const bundle = ledger.getBundle(bundleId);
        if (bundle === undefined)
          return { bundle_id: bundleId, status: ledger.bundlePending(bundleId) ? 'Pending' : 'Invalid', landed_slot: null };
        return bundle.landed
          ? { bundle_id: bundleId, status: 'Landed', landed_slot: bundle.slot }
          : // `err` is not in Jito's shape: it says why, for clients that look (Slipway's Jito route does).
            { bundle_id: bundleId, status: 'Failed', landed_slot: null, err: bundle.reason ?? null };
      }),
    );
  },
};

/** The handler of a method by the name a client sent: own methods only (never `valueOf`, `constructor`… from the prototype). */
export function ledgerMethod(name: string): Method | undefined {
  return Object.hasOwn(LEDGER_RPC_METHODS, name) ? LEDGER_RPC_METHODS[name] : undefined;
}
