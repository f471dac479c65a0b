/**
 * Parser for Solana's wire transaction format (legacy and v0 messages).
 *
 * Hand-written because it is on the hot path: it reads the bytes once, keeps views into
 * them (no copies), and checks what Agave's `sanitize` checks. A test cross-checks it
 * against @solana/web3.js on real transactions.
 */
import bs58 from 'bs58';

/** Solana's packet data size: the largest wire transaction a node accepts. */
export const PACKET_DATA_SIZE = 1232;
/** Base64 length of a PACKET_DATA_SIZE transaction (Agave's MAX_BASE64_SIZE). */
export const MAX_BASE64_SIZE = 1644;
const SIGNATURE_LENGTH = 64;
const ADDRESS_LENGTH = 32;
const MAX_ACCOUNT_KEYS = 256;

export interface CompiledInstruction {
  readonly programIdIndex: number;
  readonly accountIndexes: Buffer;
  readonly data: Buffer;
}

export interface AddressTableLookup {
  readonly tableAddress: Buffer;
  readonly writableIndexes: Buffer;
  readonly readonlyIndexes: Buffer;
}

/** A wire transaction that parsed and passed sanitize; every field is a view into `bytes`. */
export interface WireTransaction {
  readonly bytes: Buffer;
  readonly version: 'legacy' | 0;
  readonly signatures: readonly Buffer[];
  readonly message: Buffer;
  readonly numRequiredSignatures: number;
  readonly numReadonlySigned: number;
  readonly numReadonlyUnsigned: number;
  readonly staticAccountKeys: readonly Buffer[];
  readonly recentBlockhash: Buffer;
  readonly instructions: readonly CompiledInstruction[];
  readonly addressTableLookups: readonly AddressTableLookup[];
}

/** A parse failure: `deserialize` for malformed bytes, `sanitize` for inconsistent contents. */
export interface WireDefect {
  readonly stage: 'deserialize' | 'sanitize' | 'signatures';
  readonly detail: string;
}

class Reader {
  offset = 0;
  constructor(readonly bytes: Buffer) {}

  byte(what: string): number {
    if (this.offset >= this.bytes.length) throw defect('deserialize', `io error: unexpected end of file reading ${what}`);
    return this.bytes[this.offset++]!;
  }

  /** Solana's compact-u16 ("shortvec"): at most 3 bytes, canonical, value ≤ 0xffff. */
  shortU16(what: string): number {
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const b = this.byte(what);
      value |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) {
        if (i > 0 && b === 0) throw defect('deserialize', `invalid compact-u16 length for ${what}: non-canonical encoding`);
        if (value > 0xffff) throw defect('deserialize', `invalid compact-u16 length for ${what}: overflow`);
        return value;
      }
    }
    throw defect('deserialize', `invalid compact-u16 length for ${what}: more than 3 bytes`);
  }

  take(length: number, what: string): Buffer {
    if (this.offset + length > this.bytes.length) throw defect('deserialize', `io error: unexpected end of file reading ${what}`);
    const view = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return view;
  }
}

class DefectError extends Error {
  constructor(readonly defect: WireDefect) {
    super(defect.detail);
  }
}

function defect(stage: WireDefect['stage'], detail: string): DefectError {
  return new DefectError({ stage, detail });
}

/** Parses and sanitizes `bytes`; returns the transaction or what is wrong with it. */
export function parseWireTransaction(bytes: Buffer): WireTransaction | WireDefect {
  try {
    return parse(bytes);
  } catch (error) {
    if (error instanceof DefectError) return error.defect;
    throw error;
  }
}

export function isWireDefect(value: WireTransaction | WireDefect): value is WireDefect {
  return (value as WireDefect).stage !== undefined;
}

function parse(bytes: Buffer): WireTransaction {
  const r = new Reader(bytes);
  const signatureCount = r.shortU16('signatures');
  const signatures: Buffer[] = new Array(signatureCount);
  for (let i = 0; i < signatureCount; i++) signatures[i] = r.take(SIGNATURE_LENGTH, `signature ${i}`);

  const messageStart = r.offset;
  let version: 'legacy' | 0 = 'legacy';
  const prefix = r.byte('message header');
  let numRequiredSignatures = prefix;
  if (prefix & 0x80) {
    const v = prefix & 0x7f;
    if (v !== 0) throw defect('deserialize', `unsupported transaction message version ${v}; legacy and v0 are supported`);
    version = 0;
    numRequiredSignatures = r.byte('message header');
  }
  const numReadonlySigned = r.byte('message header');
  const numReadonlyUnsigned = r.byte('message header');

  const keyCount = r.shortU16('account keys');
  const staticAccountKeys: Buffer[] = new Array(keyCount);
  for (let i = 0; i < keyCount; i++) staticAccountKeys[i] = r.take(ADDRESS_LENGTH, `account key ${i}`);
  const recentBlockhash = r.take(ADDRESS_LENGTH, 'recent blockhash');

  const instructionCount = r.shortU16('instructions');
  const instructions: CompiledInstruction[] = new Array(instructionCount);
  for (let i = 0; i < instructionCount; i++) {
    const programIdIndex = r.byte(`instruction ${i} program index`);
    const accountIndexes = r.take(r.shortU16(`instruction ${i} accounts`), `instruction ${i} accounts`);
    const data = r.take(r.shortU16(`instruction ${i} data`), `instruction ${i} data`);
    instructions[i] = { programIdIndex, accountIndexes, data };
  }

  const addressTableLookups: AddressTableLookup[] = [];
  if (version === 0) {
    const lookupCount = r.shortU16('address table lookups');
    for (let i = 0; i < lookupCount; i++) {
      const tableAddress = r.take(ADDRESS_LENGTH, `address table lookup ${i}`);
      const writableIndexes = r.take(r.shortU16(`address table lookup ${i} writable indexes`), `address table lookup ${i}`);
      const readonlyIndexes = r.take(r.shortU16(`address table lookup ${i} readonly indexes`), `address table lookup ${i}`);
      addressTableLookups.push({ tableAddress, writableIndexes, readonlyIndexes });
    }
  }
  if (r.offset !== bytes.length) {
    throw defect('deserialize', `${bytes.length - r.offset} trailing bytes after the message`);
  }

  const tx: WireTransaction = {
    bytes,
    version,
    signatures,
    message: bytes.subarray(messageStart),
    numRequiredSignatures,
    numReadonlySigned,
    numReadonlyUnsigned,
    staticAccountKeys,
    recentBlockhash,
    instructions,
    addressTableLookups,
  };
  sanitize(tx);
  return tx;
}

/** Agave's `VersionedTransaction::sanitize` and `Message::sanitize`, with the reason spelled out. */
function sanitize(tx: WireTransaction): void {
  const keys = tx.staticAccountKeys.length;
  if (tx.signatures.length !== tx.numRequiredSignatures) {
    throw defect(
      'signatures',
      `the message header requires ${tx.numRequiredSignatures} signature(s) but ${tx.signatures.length} are present`,
    );
  }
  if (tx.numRequiredSignatures === 0) throw defect('sanitize', 'the message requires no signature: a fee payer must sign');
  if (tx.numRequiredSignatures + tx.numReadonlyUnsigned > keys) {
    throw defect('sanitize', `the header names more signers and read-only accounts than the ${keys} account keys`);
  }
  if (tx.numReadonlySigned >= tx.numRequiredSignatures) {
    throw defect('sanitize', 'the fee payer must be writable (all signers are read-only)');
  }
  let loaded = 0;
  for (const [i, lookup] of tx.addressTableLookups.entries()) {
    if (lookup.writableIndexes.length + lookup.readonlyIndexes.length === 0) {
      throw defect('sanitize', `address table lookup ${i} selects no address`);
    }
    loaded += lookup.writableIndexes.length + lookup.readonlyIndexes.length;
  }
  const total = keys + loaded;
  if (total > MAX_ACCOUNT_KEYS) throw defect('sanitize', `${total} accounts; at most ${MAX_ACCOUNT_KEYS}`);
  for (const [i, ix] of tx.instructions.entries()) {
    if (ix.programIdIndex === 0 || ix.programIdIndex >= keys) {
      throw defect(
        'sanitize',
        `instruction ${i} program index ${ix.programIdIndex} must name a static account key other than the fee payer (1..${keys - 1})`,
      );
    }
    for (const index of ix.accountIndexes) {
      if (index >= total) throw defect('sanitize', `instruction ${i} account index ${index} is out of range (${total} accounts)`);
    }
  }
  const seen = new Set<string>();
  for (const key of tx.staticAccountKeys) {
    const k = key.toString('latin1');
    if (seen.has(k)) throw defect('sanitize', `account ${bs58.encode(key)} is listed twice (Account loaded twice)`);
    seen.add(k);
  }
}

/** The transaction's ID as Solana reports it: the base58 of its first signature. */
export function getSignatureFromWireTransaction(tx: WireTransaction): string {
  return bs58.encode(tx.signatures[0]!);
}

const SYSTEM_PROGRAM = Buffer.alloc(32);
const ADVANCE_NONCE_ACCOUNT = 4;

/**
 * Whether the transaction uses a durable nonce instead of a recent blockhash: its first
 * instruction is the system program's AdvanceNonceAccount (as Agave decides it).
 */
export function usesDurableNonce(tx: WireTransaction): boolean {
  const first = tx.instructions[0];
  if (first === undefined || first.data.length < 4) return false;
  const program = tx.staticAccountKeys[first.programIdIndex];
  return program !== undefined && program.equals(SYSTEM_PROGRAM) && first.data.readUInt32LE(0) === ADVANCE_NONCE_ACCOUNT;
}
