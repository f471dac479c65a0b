/**
 * What a transaction asks of the compute budget and what it pays, as Agave computes it:
 * `getFeeForMessage` and `getRecentPrioritizationFees` answer from this, and a test checks
 * it against what LiteSVM really charges.
 */
import bs58 from 'bs58';
import type { WireTransaction } from '../validation/wire-transaction';

export const COMPUTE_BUDGET_PROGRAM = Buffer.from(bs58.decode('ComputeBudget111111111111111111111111111111'));
export const SET_COMPUTE_UNIT_LIMIT = 2;
export const SET_COMPUTE_UNIT_PRICE = 3;
/** Solana's fee per signature (lamports). */
export const LAMPORTS_PER_SIGNATURE = 5_000n;
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** The default limit of an instruction to a program, and of one to a builtin (Agave's reserve for builtins). */
const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000;
const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

/** Programs built into the runtime (not SBF programs): their instructions reserve 3,000 units by default. */
export const BUILTINS = new Set(
  [
    '11111111111111111111111111111111',
    'ComputeBudget111111111111111111111111111111',
    'Vote111111111111111111111111111111111111111',
    'BPFLoader1111111111111111111111111111111111',
    'BPFLoader2111111111111111111111111111111111',
    'BPFLoaderUpgradeab1e11111111111111111111111',
    'LoaderV411111111111111111111111111111111111',
    'Ed25519SigVerify111111111111111111111111111',
    'KeccakSecp256k11111111111111111111111111111',
    'Secp256r1SigVerify1111111111111111111111111',
  ].map((address) => Buffer.from(bs58.decode(address)).toString('latin1')),
);
/** Precompiles whose instructions carry signatures that are paid for like the transaction's own (count in the first data byte). */
const SIGNATURE_PRECOMPILES = new Set(
  [
    'Ed25519SigVerify111111111111111111111111111',
    'KeccakSecp256k11111111111111111111111111111',
    'Secp256r1SigVerify1111111111111111111111111',
  ].map((address) => Buffer.from(bs58.decode(address)).toString('latin1')),
);

export interface ComputeBudgetRequest {
  /** Compute units the transaction may use. */
  readonly unitLimit: number;
  /** Micro-lamports per compute unit (its priority). */
  readonly unitPrice: bigint;
}

/** The transaction's compute unit limit and price, from its compute budget instructions or the defaults. */
export function computeBudgetOf(wire: WireTransaction): ComputeBudgetRequest {
  let unitLimit: number | undefined;
  let unitPrice = 0n;
  let defaultLimit = 0;
  for (const ix of wire.instructions) {
    const program = wire.staticAccountKeys[ix.programIdIndex];
    if (program !== undefined && program.equals(COMPUTE_BUDGET_PROGRAM)) {
      if (ix.data[0] === SET_COMPUTE_UNIT_LIMIT && ix.data.length >= 5) unitLimit = ix.data.readUInt32LE(1);
      if (ix.data[0] === SET_COMPUTE_UNIT_PRICE && ix.data.length >= 9) unitPrice = ix.data.readBigUInt64LE(1);
    }
    const builtin = program !== undefined && BUILTINS.has(program.toString('latin1'));
    defaultLimit += builtin ? MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT : DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
  }
  return { unitLimit: Math.min(unitLimit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT), unitPrice };
}

/** The fee in lamports: 5,000 per signature (precompiles' included) plus the priority fee, rounded up. */
export function feeOf(wire: WireTransaction): bigint {
  const { baseFee, priorityFee } = feeDetailsOf(wire);
  return baseFee + priorityFee;
}

/**
 * The fee's two parts, as Agave's `FeeDetails`: the base fee (5,000 a signature, precompiles'
 * included: fee/src/lib.rs `calculate_signature_fee`) and the priority fee, the unit price
 * times the unit limit in micro-lamports, rounded up (`get_prioritization_fee`).
 */
export function feeDetailsOf(wire: WireTransaction): { baseFee: bigint; priorityFee: bigint } {
  let signatures = BigInt(wire.numRequiredSignatures);
  for (const ix of wire.instructions) {
    const program = wire.staticAccountKeys[ix.programIdIndex];
    if (program !== undefined && SIGNATURE_PRECOMPILES.has(program.toString('latin1'))) signatures += BigInt(ix.data[0] ?? 0);
  }
  const { unitLimit, unitPrice } = computeBudgetOf(wire);
  const priorityFee = (unitPrice * BigInt(unitLimit) + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return { baseFee: signatures * LAMPORTS_PER_SIGNATURE, priorityFee };
}

/** Whether the account at `index` of the static keys is writable, by the message header. */
export function isStaticWritable(wire: WireTransaction, index: number): boolean {
  if (index < wire.numRequiredSignatures) return index < wire.numRequiredSignatures - wire.numReadonlySigned;
  return index < wire.staticAccountKeys.length - wire.numReadonlyUnsigned;
}
