/**
 * `bin/slipway send --fee`: sets a signed transaction's compute-unit price and signs it again
 * with its fee payer's key, the only signer it may have (another signer's signature would no
 * longer hold). A SetComputeUnitPrice instruction it has is replaced; else one is put first.
 * A v0 transaction that loads addresses from lookup tables is refused: its accounts cannot be
 * rebuilt without reading the tables.
 */
import fs from 'node:fs';
import {
  ComputeBudgetProgram,
  Keypair,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';

const SET_COMPUTE_UNIT_PRICE = 3;
/** The largest price taken: a u64 on the wire, but one a JavaScript number holds exactly. */
export const MAX_PRICE = Number.MAX_SAFE_INTEGER;

/** The keypair of a Solana CLI keypair file (a JSON array of 64 bytes), or a thrown error saying what is wrong with it. */
export function readKeypair(file: string): Keypair {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`send: cannot read the keypair file ${file}: ${(error as Error).message}`, { cause: error });
  }
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    throw new Error(`send: ${file} is not a keypair file: a JSON array of 64 numbers (as solana-keygen writes) was expected`);
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255))
    throw new Error(`send: ${file} is not a keypair file: a JSON array of 64 numbers from 0 to 255 (as solana-keygen writes) was expected`);
  try {
    return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
  } catch (error) {
    throw new Error(`send: ${file} holds no valid keypair: ${(error as Error).message}`, { cause: error });
  }
}

/** `base64` with its compute-unit price set to `price` micro-lamports, signed again by `payer`; throws saying why it cannot be. */
export function withPriorityFee(base64: string, price: number, payer: Keypair): string {
  const bytes = Buffer.from(base64, 'base64');
  let transaction: VersionedTransaction;
  try {
    transaction = VersionedTransaction.deserialize(bytes);
  } catch (error) {
    throw new Error(`it does not decode as a transaction: ${(error as Error).message}`, { cause: error });
  }
  const { message } = transaction;
  const signers = message.header.numRequiredSignatures;
  if (signers !== 1 || !message.staticAccountKeys[0]!.equals(payer.publicKey))
    throw new Error(
      `--fee signs it again with the keypair given (${payer.publicKey.toBase58()}), which must be its fee payer and only signer; it has ${signers} signer(s), the fee payer ${message.staticAccountKeys[0]!.toBase58()}`,
    );
  const setPrice = ComputeBudgetProgram.setComputeUnitPrice({ microLamports: BigInt(price) });
  if (message.version === 'legacy') {
    const legacy = Transaction.from(bytes);
    legacy.instructions = priced(legacy.instructions, setPrice);
    legacy.sign(payer);
    return legacy.serialize().toString('base64');
  }
  if (message.addressTableLookups.length > 0)
    throw new Error(
      '--fee cannot rebuild a v0 transaction that loads accounts from address lookup tables: set its price where it is built',
    );
  const decompiled = TransactionMessage.decompile(message);
  const rebuilt = new TransactionMessage({
    payerKey: decompiled.payerKey,
    recentBlockhash: decompiled.recentBlockhash,
    instructions: priced(decompiled.instructions, setPrice),
  }).compileToV0Message();
  const signed = new VersionedTransaction(rebuilt);
  signed.sign([payer]);
  return Buffer.from(signed.serialize()).toString('base64');
}

function priced(instructions: readonly TransactionInstruction[], setPrice: TransactionInstruction): TransactionInstruction[] {
  const at = instructions.findIndex((ix) => ix.programId.equals(ComputeBudgetProgram.programId) && ix.data[0] === SET_COMPUTE_UNIT_PRICE);
  if (at < 0) return [setPrice, ...instructions];
  return instructions.map((ix, i) => (i === at ? setPrice : ix));
}
