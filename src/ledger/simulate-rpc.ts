/**
 * `simulateTransaction` on the local ledgers, in Agave's shape and with its options, so that
 * clients that size compute budgets or check a transaction before sending it (gill's
 * `prepareTransaction`, kit's compute-unit estimate, @solana-developers/helpers) work
 * against the embedded ledger and `bin/slipway ledger` as against a node.
 *
 * Honoured: `encoding` (base58 default, base64), `sigVerify`, `replaceRecentBlockhash`
 * (not both), `minContextSlot`, `accounts` (base64 only), `innerInstructions`.
 * `commitment` is checked and otherwise moot: the ledger has one state, its latest.
 * Inner instructions are reported undecoded (program, accounts, base58 data), the form
 * Agave uses for programs it has no parser for.
 */
import bs58 from 'bs58';
import type { RpcAnswer } from '../core/rpc-types';
import { validateTransaction } from '../validation/validate-transaction';
import { verifyTransactionSignaturesAsValidators } from '../validation/verify-signatures';
import type { LocalLedger, SimulationOutcome } from './local-ledger';
import { API_VERSION, describeParam, encodeAccount, invalidParams, parseAddress, isAnswer } from './rpc-shapes';

const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);

interface AccountsRequest {
  readonly addresses: readonly Uint8Array[];
}

export function simulateTransaction(ledger: LocalLedger, params: readonly unknown[]): RpcAnswer {
  const [encoded, configValue] = params;
  if (typeof encoded !== 'string') return invalidParams('params[0] must be the transaction, a base58 or base64 string');
  if (configValue !== undefined && configValue !== null && (typeof configValue !== 'object' || Array.isArray(configValue))) {
    return invalidParams('params[1] must be a configuration object');
  }
  const config = (configValue ?? {}) as Record<string, unknown>;
  const encoding = config.encoding ?? 'base58';
  if (encoding !== 'base58' && encoding !== 'base64')
    return invalidParams(
      `unsupported encoding: ${typeof encoding === 'string' ? encoding.slice(0, 40) : describeParam(encoding)}. Supported encodings: base58, base64`,
    );
  for (const flag of ['sigVerify', 'replaceRecentBlockhash', 'innerInstructions'] as const) {
    if (config[flag] !== undefined && typeof config[flag] !== 'boolean') return invalidParams(`${flag} must be true or false`);
  }
  if (config.commitment !== undefined && !COMMITMENTS.has(config.commitment as string))
    return invalidParams('commitment must be processed, confirmed or finalized');
  const minContextSlot = config.minContextSlot;
  if (minContextSlot !== undefined && (typeof minContextSlot !== 'number' || !Number.isSafeInteger(minContextSlot) || minContextSlot < 0)) {
    return invalidParams('minContextSlot must be a slot (a non-negative integer)');
  }
  if (typeof minContextSlot === 'number' && ledger.currentSlot < minContextSlot) {
    return { error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: ledger.currentSlot } } };
  }
  const sigVerify = config.sigVerify === true;
  const replace = config.replaceRecentBlockhash === true;
  if (sigVerify && replace) return invalidParams('sigVerify may not be used with replaceRecentBlockhash');

  const parsed = validateTransaction(encoded, '', undefined, { encoding, verifySignatures: false });
  if (!parsed.ok) return { error: { code: -32602, message: parsed.error.message } };
  const tx = parsed.value;
  const accounts = accountsRequest(config.accounts);
  if (isAnswer(accounts)) return accounts;

  const outcome: SimulationOutcome =
    sigVerify && !verifyTransactionSignaturesAsValidators(tx.wire).valid
      ? {
          signature: tx.signature,
          err: 'SignatureFailure',
          errText: 'Transaction did not pass signature verification',
          logs: [],
          unitsConsumed: 0,
          included: false,
          accountKeys: tx.wire.staticAccountKeys,
          postAccounts: [],
          innerInstructions: [],
          returnData: null,
        }
      : ledger.simulateInDetail(tx, { replaceBlockhash: replace });
  if (accounts !== undefined && accounts.addresses.length > outcome.accountKeys.length) {
    return invalidParams(`Too many accounts provided; max ${outcome.accountKeys.length}`);
  }
  const value = {
    err: outcome.err,
    logs: outcome.logs,
    accounts: accounts === undefined ? null : accounts.addresses.map((address) => accountAfter(outcome, address)),
    unitsConsumed: outcome.unitsConsumed,
    returnData:
      outcome.returnData === null
        ? null
        : {
            programId: bs58.encode(outcome.returnData.programId),
            data: [Buffer.from(outcome.returnData.data).toString('base64'), 'base64'],
          },
    innerInstructions: config.innerInstructions === true ? innerInstructionsOf(outcome) : null,
    replacementBlockhash: replace ? ledger.latestBlockhash() : null,
  };
  return { result: { context: { slot: ledger.currentSlot, apiVersion: API_VERSION }, value } };
}

/** `config.accounts`: which accounts to report after the simulation (base64, the default, is the one encoding served). */
function accountsRequest(value: unknown): AccountsRequest | undefined | RpcAnswer {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    return invalidParams('accounts must be an object: { addresses: [...], encoding: "base64" }');
  const { addresses, encoding } = value as Record<string, unknown>;
  if (encoding === 'base58' || encoding === 'binary') return invalidParams('base58 encoding not supported');
  if (encoding !== undefined && encoding !== 'base64')
    return invalidParams(`accounts encoding ${describeParam(encoding)} is not supported by the local ledger; use base64`);
  if (!Array.isArray(addresses)) return invalidParams('accounts.addresses must be an array of base58 addresses');
  const parsed: Uint8Array[] = [];
  for (const address of addresses) {
    const bytes = parseAddress(address);
    if (isAnswer(bytes)) return bytes;
    parsed.push(bytes);
  }
  return { addresses: parsed };
}

/** An account as the simulation left it; null when it failed or the transaction does not load the account (as Agave answers). */
function accountAfter(outcome: SimulationOutcome, address: Uint8Array): unknown {
  if (outcome.err !== null) return null;
  const entry = outcome.postAccounts.find((candidate) => Buffer.from(candidate.address).equals(address));
  return entry === undefined ? null : encodeAccount(entry.account, 'base64');
}

function innerInstructionsOf(outcome: SimulationOutcome): unknown {
  const keys = outcome.accountKeys.map((key) => bs58.encode(key));
  return outcome.innerInstructions
    .map((instructions, index) => ({
      index,
      instructions: instructions.map((inner) => ({
        programId: keys[inner.programIdIndex] ?? null,
        accounts: [...inner.accounts].map((i) => keys[i] ?? null),
        data: bs58.encode(inner.data),
        stackHeight: inner.stackHeight,
      })),
    }))
    .filter((entry) => entry.instructions.length > 0);
}
