/**
 * The market's transactions, built and signed directly in Solana's wire format (a legacy
 * message, thousands a second; a test decodes them with `@solana/web3.js` and runs them): a
 * system transfer with the compute-budget instructions a careful sender
 * gives (a unit limit that fits, a price, a loaded-data limit of 32 KiB), and for a bundle a
 * second transfer to a tip account. Signed with node:crypto's ed25519.
 */
import { createHash, sign, type KeyObject } from 'node:crypto';
import { identityFromSeed } from '../ledger/validator-keypairs';

const SYSTEM_PROGRAM = Buffer.alloc(32);
/** ComputeBudget111111111111111111111111111111 */
const COMPUTE_BUDGET_PROGRAM = Buffer.from('0306466fe5211732ffecadba72c39be7bc8ce5bbc5f7126b2c439b3a40000000', 'hex');
/** Compute units a market transfer uses: 150 for each of its three compute-budget instructions and the transfer. */
export const TRANSFER_UNITS = 600;
/** With a tip transfer besides. */
export const TIPPED_UNITS = 750;
/** The loaded-accounts limit the market's transactions set. */
export const LOADED_BYTES_LIMIT = 32 * 1024;

export interface Wallet {
  readonly publicKey: Buffer;
  readonly privateKey: KeyObject;
}

/** The market's wallet `index`, derived from the public seed `slipway market INDEX` (the same on every machine). */
export function marketWallet(index: number): Wallet {
  return seededWallet(`slipway market ${index}`);
}

/** The ed25519 keypair whose 32-byte seed is the SHA-256 of `phrase`: public, so the same on every machine. */
export function seededWallet(phrase: string): Wallet {
  return identityFromSeed(createHash('sha256').update(phrase).digest());
}

export interface TransferSpec {
  readonly from: Wallet;
  readonly to: Buffer;
  readonly lamports: number;
  readonly blockhash: Buffer;
  /** Micro-lamports per compute unit. */
  readonly price: number;
  /** A tip transfer to this account, for a bundle. */
  readonly tip?: { readonly account: Buffer; readonly lamports: number };
}

/** The signed transaction's wire bytes. */
export function transferWire(spec: TransferSpec): Buffer {
  const tip = spec.tip;
  // Keys: the payer (signer, writable), the writable recipients, then the two read-only programs.
  const keys = tip === undefined ? [spec.from.publicKey, spec.to] : [spec.from.publicKey, spec.to, tip.account];
  const system = keys.length;
  const budget = keys.length + 1;
  const instructions = [
    instruction(budget, [], u8u32(2, tip === undefined ? TRANSFER_UNITS : TIPPED_UNITS)),
    instruction(budget, [], u8u64(3, spec.price)),
    instruction(budget, [], u8u32(4, LOADED_BYTES_LIMIT)),
    instruction(system, [0, 1], transferData(spec.lamports)),
  ];
  if (tip !== undefined) instructions.push(instruction(system, [0, 2], transferData(tip.lamports)));
  const message = Buffer.concat([
    Buffer.from([1, 0, 2, keys.length + 2]),
    ...keys,
    SYSTEM_PROGRAM,
    COMPUTE_BUDGET_PROGRAM,
    spec.blockhash,
    Buffer.from([instructions.length]),
    ...instructions,
  ]);
  return Buffer.concat([Buffer.from([1]), sign(null, message, spec.from.privateKey), message]);
}

function instruction(program: number, accounts: number[], data: Buffer): Buffer {
  return Buffer.concat([Buffer.from([program, accounts.length, ...accounts, data.length]), data]);
}

function u8u32(tag: number, value: number): Buffer {
  const data = Buffer.alloc(5);
  data[0] = tag;
  data.writeUInt32LE(value, 1);
  return data;
}

function u8u64(tag: number, value: number): Buffer {
  const data = Buffer.alloc(9);
  data[0] = tag;
  data.writeBigUInt64LE(BigInt(value), 1);
  return data;
}

function transferData(lamports: number): Buffer {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0);
  data.writeBigUInt64LE(BigInt(lamports), 4);
  return data;
}
