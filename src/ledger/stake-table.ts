/**
 * Stake per identity, for the local cluster's TPU quality of service (`--stakes FILE`): a
 * JSON object mapping base58 identities to lamports, e.g.
 * `{"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin": 5000000000000}`. Identities not in the
 * file have no stake. The stake of all the identities in the file together is the total
 * that each share is taken of. The leader schedule is not drawn from it (every validator
 * leads equally often); only how much each sender may push into a TPU depends on it.
 */
import fs from 'node:fs';
import bs58 from 'bs58';

export class StakeTable {
  private readonly stakes: ReadonlyMap<string, bigint>;
  readonly total: bigint;

  constructor(stakes: ReadonlyMap<string, bigint> = new Map()) {
    this.stakes = stakes;
    this.total = [...stakes.values()].reduce((sum, stake) => sum + stake, 0n);
  }

  /** Reads and checks a stakes file; throws naming the file and what is wrong. */
  static read(file: string): StakeTable {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`stakes file ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const parsed = StakeTable.parse(text);
    if (typeof parsed === 'string') throw new Error(`stakes file ${file}: ${parsed}`);
    return parsed;
  }

  /** A stake table from the file's text, or what is wrong with it. */
  static parse(text: string): StakeTable | string {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return 'not JSON (expected an object of base58 identity → lamports)';
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'expected a JSON object of base58 identity → lamports';
    const stakes = new Map<string, bigint>();
    for (const [identity, lamports] of Object.entries(value as Record<string, unknown>)) {
      let key: Uint8Array;
      try {
        key = bs58.decode(identity);
      } catch {
        return `${JSON.stringify(identity.slice(0, 60))} is not a base58 identity`;
      }
      if (key.length !== 32) return `${identity} is not a public key (32 bytes)`;
      const amount = lamportsOf(lamports);
      if (amount === null) return `the stake of ${identity} must be a non-negative integer of lamports (a number, or a string of digits)`;
      stakes.set(identity, amount);
    }
    return new StakeTable(stakes);
  }

  stakeOf(identity: string): bigint {
    return this.stakes.get(identity) ?? 0n;
  }

  /** The identity's share of the total stake, from 0 to 1. */
  shareOf(identity: string): number {
    if (this.total === 0n) return 0;
    // Parts per 10^12 in integers first: lamport totals go past what a double holds exactly.
    return Number((this.stakeOf(identity) * 1_000_000_000_000n) / this.total) / 1e12;
  }
}

function lamportsOf(value: unknown): bigint | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null;
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return BigInt(value);
  return null;
}
