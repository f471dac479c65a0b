/**
 * The positional params of the read methods Slipway forwards by default, as Agave declares
 * them (`rpc.rs`: a method's arguments, then an optional config struct), checked before a
 * read leaves the gateway, so that every route answers the same: a count past the method's
 * arguments, or an argument of the wrong type (a config of `1`, a pubkey of `[]`), is refused
 * with -32602 naming the parameter. Agave reads a missing optional argument and `null` alike
 * (serde's `Option`), so both pass; a config's own fields are the node's to check. Methods
 * outside this table (the `readMethods` setting may add any) go unchecked.
 */
import { quote } from '../errors/client-text';

/** One argument: what it must be, and whether it may be left out (or null). */
type Kind = 'string' | 'strings' | 'integer' | 'config' | 'encodingOrConfig';
interface Param {
  readonly name: string;
  readonly kind: Kind;
  readonly optional?: true;
}

const config = (name = 'config'): Param => ({ name, kind: 'config', optional: true });
const string = (name: string): Param => ({ name, kind: 'string' });

/** Agave's signatures (agave/rpc/src/rpc.rs), and Jito's getTipAccounts (none). */
const READ_PARAMS: Readonly<Record<string, readonly Param[]>> = {
  getLatestBlockhash: [config()],
  isBlockhashValid: [string('blockhash'), config()],
  getBlockHeight: [config()],
  getSlot: [config()],
  getEpochInfo: [config()],
  getBalance: [string('pubkey'), config()],
  getAccountInfo: [string('pubkey'), config()],
  getMultipleAccounts: [{ name: 'pubkeys', kind: 'strings' }, config()],
  getTokenAccountBalance: [string('pubkey'), config('commitment')],
  getMinimumBalanceForRentExemption: [{ name: 'data length', kind: 'integer' }, config('commitment')],
  getFeeForMessage: [string('message'), config()],
  getRecentPrioritizationFees: [{ name: 'account addresses', kind: 'strings', optional: true }],
  getTransaction: [string('signature'), { name: 'config', kind: 'encodingOrConfig', optional: true }],
  getSignaturesForAddress: [string('address'), config()],
  simulateTransaction: [string('transaction'), config()],
  getVersion: [],
  getHealth: [],
  getTipAccounts: [],
  requestAirdrop: [string('pubkey'), { name: 'lamports', kind: 'integer' }, config()],
};

const WHAT: Record<Kind, string> = {
  string: 'a string',
  strings: 'an array of strings',
  integer: 'a non-negative integer',
  config: 'a configuration object',
  encodingOrConfig: 'a configuration object (or an encoding name)',
};

function fits(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'strings':
      return Array.isArray(value) && value.every((entry) => typeof entry === 'string');
    case 'integer':
      return Number.isSafeInteger(value) && (value as number) >= 0;
    case 'config':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    case 'encodingOrConfig':
      return typeof value === 'string' || fits(value, 'config');
  }
}

/** Why `params` do not fit `method`'s arguments (a sentence for -32602), or null when they do or the method is not in the table. */
export function readParamsProblem(method: string, params: readonly unknown[]): string | null {
  const expected = READ_PARAMS[method];
  if (expected === undefined) return null;
  const shape = `[${expected.map((param) => (param.optional === true ? `${param.name}?` : param.name)).join(', ')}]`;
  if (params.length > expected.length) {
    return expected.length === 0
      ? `Invalid params: ${method} takes no params; got ${params.length}`
      : `Invalid params: ${method} takes at most ${expected.length} params ${shape}; got ${params.length}`;
  }
  for (const [index, param] of expected.entries()) {
    const value = params[index];
    if ((value === undefined || value === null) && param.optional === true) continue;
    if (value === undefined) return `Invalid params: ${method} needs params[${index}] (${param.name}): it takes ${shape}`;
    if (!fits(value, param.kind))
      return `Invalid params: ${method}'s params[${index}] (${param.name}) must be ${WHAT[param.kind]}; got ${quote(value)}`;
  }
  return null;
}
