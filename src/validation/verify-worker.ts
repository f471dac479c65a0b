/**
 * A signature-verification thread (see worker-verifier.ts): serves a slot ring of packed
 * transactions, verifies every signature of each, and answers one number per transaction:
 * -1 when all verify, else the index of the first bad signature (+ 0x4000 when that
 * signature is empty, i.e. all zeros). Transactions that wait together are verified
 * together by the native verifier where it was built (about half the cost a signature);
 * when such a group fails, each of its transactions is verified alone to say which.
 */
import { isMainThread, workerData } from 'node:worker_threads';
import { serveSlotRing, type GroupHandler, type SlotRingMemory } from '../runtime/slot-ring';
import { nativeEd25519 } from './native-ed25519';
import { isAllZero, verifySignature } from './verify-signatures';
import type { WireTransaction } from './wire-transaction';

export const EMPTY_FLAG = 0x4000;

/** The largest packed transaction: 1232 wire bytes, plus 32 per signer for its key (at most 12 fit). */
export const PACKED_MAX_BYTES = 2048;

/** Layout: u8 signer count n, n×64 signatures, n×32 signer keys, the message (to the end). Returns the length. */
export function packTransaction(wire: WireTransaction, target: Buffer): number {
  const n = wire.signatures.length;
  target[0] = n;
  let at = 1;
  for (const signature of wire.signatures) at += signature.copy(target, at);
  for (let i = 0; i < n; i++) at += wire.staticAccountKeys[i]!.copy(target, at);
  return at + wire.message.copy(target, at);
}

/** Verifies one packed transaction (see packTransaction), held in memory of this thread's own. */
export function verifyPackedTransaction(packed: Buffer): number {
  const n = packed[0]!;
  const keys = 1 + n * 64;
  const message = packed.subarray(keys + n * 32);
  for (let i = 0; i < n; i++) {
    const signature = packed.subarray(1 + i * 64, 1 + (i + 1) * 64);
    if (!verifySignature(signature, message, packed.subarray(keys + i * 32, keys + (i + 1) * 32))) {
      return i | (isAllZero(signature) ? EMPTY_FLAG : 0);
    }
  }
  return -1;
}

/**
 * sodium-native answers `undefined` (neither true nor false) for views of a
 * SharedArrayBuffer, so each slot is copied into this thread's own buffer first (a copy of
 * at most 2 KB, against a 50 µs verification).
 */
const scratch = Buffer.alloc(PACKED_MAX_BYTES);
const verifyFromSlot = (slot: Buffer): number => verifyPackedTransaction(scratch.subarray(0, slot.copy(scratch)));

/** Up to this many waiting transactions are verified as one group. */
export const GROUP_MAX = 32;

/** Verifies a group in place in the shared slots: true when every signature of every transaction verifies. */
const verifyGroup: GroupHandler | undefined =
  nativeEd25519 === null
    ? undefined
    : {
        max: GROUP_MAX,
        result: -1,
        handle: (slots, offsets, lengths, count) => nativeEd25519!.verifyPacked(slots, offsets, lengths, count) === 1,
      };

if (!isMainThread && workerData?.verifier === true) {
  serveSlotRing(workerData.ring as SlotRingMemory, verifyFromSlot, workerData.spinMs as number, verifyGroup);
}
