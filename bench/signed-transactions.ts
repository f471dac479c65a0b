/**
 * Distinct, validly signed transactions for the benchmark, made fast: one legacy transfer
 * message, its lamports field changed for each transaction, signed with libsodium (about
 * 20 µs each, where @solana/web3.js takes several times that).
 */
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
  const lamportsAt = message.length - 8;
  let next = firstLamports;
  return (): string => {
    const copy = Buffer.from(message);
    copy.writeBigUInt64LE(BigInt(next++), lamportsAt);
    const wire = Buffer.alloc(1 + 64 + copy.length);
    wire[0] = 1;
    sodium.crypto_sign_detached(wire.subarray(1, 65), copy, payer.secretKey);
    copy.copy(wire, 65);
    return wire.toString('base64');
  };
}

/**
 * `count` transactions from `next`, made now, before the measurement: signing while the
 * load runs would take the load generator's CPU time from the server on a small machine.
 * If a run needs more than were made, the rest are signed on the fly and counted, or, with
 * `cycle` (for a server that does not care, the bare ceiling), the made ones are sent again.
 */
export function pregenerate(next: () => string, count: number, cycle = false): { next: () => string; readonly onTheFly: number } {
  const made = Array.from({ length: count }, next);
  let at = 0;
  let onTheFly = 0;
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
  };
}
