/**
 * `simulateBundle`'s parameters as Jito-Solana's RPC takes them (`RpcBundleRequest` and
 * `RpcSimulateBundleConfig`), parsed once at the edge for the gateway and the local ledger
 * alike: `params[0]` = `{ encodedTransactions: [...] }` (1 to 5), `params[1]` optional:
 *
 * - `preExecutionAccountsConfigs` / `postExecutionAccountsConfigs`: one entry per
 *   transaction, each null or `{ addresses: [base58…], encoding: "base64" }` (absent or empty:
 *   none); the accounts are reported before / after that transaction ran;
 * - `transactionEncoding`: `base64` (the default) or `base58`;
 * - `skipSigVerify`: the signatures are not checked;
 * - `replaceRecentBlockhash`: run as if signed with the latest blockhash (old blockhashes pass);
 * - `simulationBank`: `"tip"`, `{ "commitment": … }` or `{ "slot": N }`, accepted and moot
 *   where there is one state to simulate on (the local ledgers: their latest).
 */
import bs58 from 'bs58';

export const MAX_BUNDLE_SIMULATION_TRANSACTIONS = 5;
const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);

export interface BundleSimulationRequest {
  readonly encodedTransactions: readonly string[];
  readonly encoding: 'base64' | 'base58';
  readonly skipSigVerify: boolean;
  readonly replaceRecentBlockhash: boolean;
  /** Per transaction, the addresses whose accounts to report before it ran (null: none). */
  readonly preAccounts: readonly (readonly Uint8Array[] | null)[];
  /** Per transaction, the addresses whose accounts to report after it ran (null: none). */
  readonly postAccounts: readonly (readonly Uint8Array[] | null)[];
}

/** The request, or what is wrong with it (for an Invalid params error). */
export function parseBundleSimulationRequest(params: readonly unknown[]): BundleSimulationRequest | string {
  const [request, configValue] = params;
  if (request === null || typeof request !== 'object' || Array.isArray(request))
    return 'params[0] must be an object: { "encodedTransactions": [the bundle\'s transactions] }';
  const encoded = (request as Record<string, unknown>).encodedTransactions;
  if (!Array.isArray(encoded) || encoded.length === 0) return 'params[0].encodedTransactions must be a non-empty array of transactions';
  if (encoded.length > MAX_BUNDLE_SIMULATION_TRANSACTIONS)
    return `params[0].encodedTransactions has ${encoded.length} transactions; a bundle has at most ${MAX_BUNDLE_SIMULATION_TRANSACTIONS}`;
  const notString = encoded.findIndex((entry) => typeof entry !== 'string');
  if (notString >= 0) return `params[0].encodedTransactions[${notString}] must be a string`;
  if (configValue !== undefined && configValue !== null && (typeof configValue !== 'object' || Array.isArray(configValue)))
    return 'params[1] must be a configuration object';
  const config = (configValue ?? {}) as Record<string, unknown>;
  const encoding = config.transactionEncoding ?? 'base64';
  if (encoding !== 'base64' && encoding !== 'base58') return 'transactionEncoding must be base64 or base58';
  for (const flag of ['skipSigVerify', 'replaceRecentBlockhash'] as const)
    if (config[flag] !== undefined && typeof config[flag] !== 'boolean') return `${flag} must be true or false`;
  const bank = simulationBankProblem(config.simulationBank);
  if (bank !== null) return bank;
  const preAccounts = accountsConfigs(config.preExecutionAccountsConfigs, 'preExecutionAccountsConfigs', encoded.length);
  if (typeof preAccounts === 'string') return preAccounts;
  const postAccounts = accountsConfigs(config.postExecutionAccountsConfigs, 'postExecutionAccountsConfigs', encoded.length);
  if (typeof postAccounts === 'string') return postAccounts;
  return {
    encodedTransactions: encoded as string[],
    encoding,
    skipSigVerify: config.skipSigVerify === true,
    replaceRecentBlockhash: config.replaceRecentBlockhash === true,
    preAccounts,
    postAccounts,
  };
}

/** The request back in Jito-Solana's shape, for an upstream RPC node that simulates bundles. */
export function bundleSimulationParams(request: BundleSimulationRequest): unknown[] {
  const configs = (list: readonly (readonly Uint8Array[] | null)[]) =>
    list.map((addresses) => (addresses === null ? null : { addresses: addresses.map((a) => bs58.encode(a)), encoding: 'base64' }));
  return [
    { encodedTransactions: request.encodedTransactions },
    {
      preExecutionAccountsConfigs: configs(request.preAccounts),
      postExecutionAccountsConfigs: configs(request.postAccounts),
      transactionEncoding: request.encoding,
      skipSigVerify: request.skipSigVerify,
      replaceRecentBlockhash: request.replaceRecentBlockhash,
    },
  ];
}

function simulationBankProblem(value: unknown): string | null {
  if (value === undefined || value === null || value === 'tip') return null;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [key, inner] = entries[0]!;
      if (key === 'slot' && typeof inner === 'number' && Number.isSafeInteger(inner) && inner >= 0) return null;
      const commitment = inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>).commitment : undefined;
      if (key === 'commitment' && COMMITMENTS.has(commitment as string)) return null;
    }
  }
  return 'simulationBank must be "tip", { "commitment": { "commitment": "processed" | "confirmed" | "finalized" } } or { "slot": N }';
}

function accountsConfigs(value: unknown, field: string, count: number): (Uint8Array[] | null)[] | string {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return new Array<null>(count).fill(null);
  if (!Array.isArray(value)) return `${field} must be an array with one entry per transaction (null or { "addresses": [...] })`;
  if (value.length !== count) return `${field} has ${value.length} entries; it must have one per transaction (${count})`;
  const parsed: (Uint8Array[] | null)[] = [];
  for (const [index, entry] of value.entries()) {
    if (entry === null) {
      parsed.push(null);
      continue;
    }
    if (typeof entry !== 'object' || Array.isArray(entry))
      return `${field}[${index}] must be null or { "addresses": [...], "encoding": "base64" }`;
    const { addresses, encoding } = entry as Record<string, unknown>;
    if (encoding !== undefined && encoding !== 'base64') return `${field}[${index}].encoding: only base64 is supported`;
    if (!Array.isArray(addresses)) return `${field}[${index}].addresses must be an array of base58 addresses`;
    const keys: Uint8Array[] = [];
    for (const [at, address] of addresses.entries()) {
      const key = typeof address === 'string' ? decodeAddress(address) : null;
      if (key === null) return `${field}[${index}].addresses[${at}] is not a base58 address`;
      keys.push(key);
    }
    parsed.push(keys);
  }
  return parsed;
}

function decodeAddress(text: string): Uint8Array | null {
  if (text.length > 44) return null;
  try {
    const bytes = bs58.decode(text);
    return bytes.length === 32 ? bytes : null;
  } catch {
    return null;
  }
}
