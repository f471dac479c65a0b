/**
 * The transaction forms the client takes, all sent as Base64 of the wire bytes: raw bytes,
 * Base64 text (passed through: the gateway checks it), `@solana/web3.js` `Transaction` and
 * `VersionedTransaction`, and `@solana/kit` transactions (`{ messageBytes, signatures }`).
 */
import { getBase64EncodedWireTransaction, type Transaction as KitTransaction } from '@solana/kit';
import bs58 from 'bs58';

/** Anything with web3.js's `serialize()`: a legacy `Transaction` or a `VersionedTransaction`. */
export interface SerializableTransaction {
  serialize(): Uint8Array;
}

export type TransactionInput = Uint8Array | string | SerializableTransaction | KitTransaction;

export function toBase64(input: TransactionInput): string {
  if (typeof input === 'string') return input;
  if (input instanceof Uint8Array) return Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('base64');
  if ('messageBytes' in input && 'signatures' in input) return getBase64EncodedWireTransaction(input);
  return Buffer.from(input.serialize()).toString('base64');
}

/** The first signature of a transaction in wire form (Base64), in base58: its id on the network. */
export function firstSignature(base64: string): string {
  const wire = Buffer.from(base64, 'base64');
  // A compact-u16 count (one byte below 128, as every real transaction has) then 64-byte signatures.
  const offset = wire[0]! < 0x80 ? 1 : 2;
  return bs58.encode(wire.subarray(offset, offset + 64));
}
