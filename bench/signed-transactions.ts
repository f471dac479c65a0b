/**
 * Distinct, validly signed transactions for the benchmark, made fast: one legacy transfer
 * message, its lamports field changed for each transaction, signed with libsodium (about
 * 20 µs each, where @solana/web3.js takes several times that).
 */
import bs58 from 'bs58';
import sodium from 'sodium-native';

const SYSTEM_PROGRAM = Buffer.alloc(32);

export interface Signer {
  readonly publicKey: Buffer;
  readonly secretKey: Buffer;
}

export function newSigner(): Signer {
  const publicKey = Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES);
  const secretKey = Buffer.alloc(sodium.crypto_sign_SECRETKEYBYTES);
  sodium.crypto_sign_keypair(publicKey, secretKey);
  return { publicKey, secretKey };
}

/** A factory of Base64 transfers from `payer` to `recipient` of distinct amounts. */
export function transferFactory(payer: Signer, recipient: Buffer, blockhash: Buffer, firstLamports = 1_000_000) {
  const message = Buffer.concat([
    Buffer.from([1, 0, 1, 3]), // header (1 signer, 0 read-only signed, 1 read-only unsigned), 3 keys
    payer.publicKey,
    recipient,
    SYSTEM_PROGRAM,
    blockhash,
    Buffer.from([1, 2, 2, 0, 1, 12]), // 1 instruction: program 2, accounts [0, 1], 12 bytes of data
    Buffer.from([2, 0, 0, 0]), // SystemInstruction::Transfer
    Buffer.alloc(8), // lamports
  ]);
  const sign = signedCopies(message, message.length - 8, payer, firstLamports);
  return (): string => sign().toString('base64');
}

/**
 * A factory of Base64 transfers from `payer` to `recipient` of distinct amounts, each with a
 * second transfer of `tipLamports` to `tipAccount`: how a transaction pays a block engine's
 * tip itself (Jito asks a tip of sendTransaction; from the jito upstream's `minTipLamports`,
 * 1,000 by default, the gateway sends it `bundleOnly`).
 */
export function tippedTransferFactory(
  payer: Signer,
  recipient: Buffer,
  tipAccount: Buffer,
  tipLamports: number,
  blockhash: Buffer,
  firstLamports = 1_000_000,
) {
  const tip = Buffer.alloc(8);
  tip.writeBigUInt64LE(BigInt(tipLamports));
  const message = Buffer.concat([
    Buffer.from([1, 0, 1, 4]), // 1 signer, 0 read-only signed, 1 read-only unsigned (the program), 4 keys
    payer.publicKey,
    recipient,
    tipAccount,
    SYSTEM_PROGRAM,
    blockhash,
    Buffer.from([2]), // 2 instructions
    Buffer.from([3, 2, 0, 1, 12, 2, 0, 0, 0]), // Transfer from key 0 to key 1
    Buffer.alloc(8), // its lamports, written per copy
    Buffer.from([3, 2, 0, 2, 12, 2, 0, 0, 0]), // Transfer from key 0 to key 2, the tip
    tip,
  ]);
  const sign = signedCopies(message, message.length - 8 - 9 - 8, payer, firstLamports);
  return (): string => sign().toString('base64');
}

/** Signed copies of a one-signer `message`, each with the next amount written at `lamportsAt`. */
function signedCopies(message: Buffer, lamportsAt: number, payer: Signer, firstLamports: number): () => Buffer {
  let next = firstLamports;
  return () => {
    const copy = Buffer.from(message);
    copy.writeBigUInt64LE(BigInt(next++), lamportsAt);
    const wire = Buffer.alloc(1 + 64 + copy.length);
    wire[0] = 1;
    sodium.crypto_sign_detached(wire.subarray(1, 65), copy, payer.secretKey);
    copy.copy(wire, 65);
    return wire;
  };
}

/**
 * `count` transactions from `next`, made now, before the measurement: signing while the
 * load runs would take the load generator's CPU time from the server on a small machine.
 * If a run needs more than were made, the rest are signed on the fly and counted, or, with
 * `cycle` (for a server that does not care, the bare ceiling), the made ones are sent again.
 * `refill`, between runs, signs what the next one needs if it sends `factor` times what was
 * sent since the last refill: the first count is a guess from the ceiling's warm-up, and a
 * warm-up measured on a cold machine left runs short (98,059 signed on the fly in one run).
 */
export function pregenerate(
  next: () => string,
  count: number,
  cycle = false,
): { next: () => string; readonly onTheFly: number; refill(factor: number): void } {
  const made = Array.from({ length: count }, next);
  let at = 0;
  let onTheFly = 0;
  let sentAtRefill = 0;
  return {
    next: () => {
      if (cycle) return made[at++ % made.length]!;
      if (at < made.length) {
        const tx = made[at]!;
        made[at++] = ''; // let it go once sent
        return tx;
      }
      onTheFly += 1;
      return next();
    },
    get onTheFly() {
      return onTheFly;
    },
    refill(factor) {
      if (cycle) return;
      const sent = at + onTheFly;
      const wanted = Math.ceil((sent - sentAtRefill) * factor);
      sentAtRefill = sent;
      for (let left = made.length - at; left < wanted; left++) made.push(next());
    },
  };
}

const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

/**
 * A factory of signed transfers padded with a memo to exactly `size` bytes on the wire (the
 * TPU benchmark sends full-size transactions: 1,232 bytes is the most a packet carries).
 */
export function paddedTransferFactory(payer: Signer, recipient: Buffer, blockhash: Buffer, size: number): () => Buffer {
  const memoProgram = Buffer.from(bs58.decode(MEMO_PROGRAM));
  const compact = (n: number) => (n < 0x80 ? Buffer.of(n) : Buffer.of((n & 0x7f) | 0x80, n >> 7));
  const build = (memoLength: number) =>
    Buffer.concat([
      Buffer.from([1, 0, 2, 4]), // 1 signer, 0 read-only signed, 2 read-only unsigned (the programs), 4 keys
      payer.publicKey,
      recipient,
      SYSTEM_PROGRAM,
      memoProgram,
      blockhash,
      Buffer.from([2, 2, 2, 0, 1, 12, 2, 0, 0, 0]), // 2 instructions; Transfer from key 0 to key 1
      Buffer.alloc(8), // lamports
      Buffer.from([3, 0]), // the memo: program 3, no accounts
      compact(memoLength),
      Buffer.alloc(memoLength, 0x78),
    ]);
  let memoLength = size - 65 - build(0).length;
  while (65 + build(memoLength).length > size) memoLength--;
  const message = build(memoLength);
  if (65 + message.length !== size) throw new Error(`cannot pad a transfer to ${size} bytes`);
  return signedCopies(message, 4 + 4 * 32 + 32 + 10, payer, 1_000_000);
}
