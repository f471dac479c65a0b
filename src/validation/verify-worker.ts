/**
 * A signature-verification thread (see worker-verifier.ts). Receives packed batches of
 * transactions, verifies every signature of each with libsodium, and answers one Int16 per
 * transaction: -1 when all verify, else the index of the first bad signature (+ 0x4000 when
 * that signature is empty, i.e. all zeros).
 */
import { parentPort } from 'node:worker_threads';
import sodium from 'sodium-native';

export const EMPTY_FLAG = 0x4000;

function isAllZero(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** Layout per transaction: u8 signer count n, n×64 signatures, n×32 keys, u16 LE message length, message. */
export function verifyPacked(packed: Buffer, count: number): Int16Array {
  const results = new Int16Array(count);
  let at = 0;
  for (let t = 0; t < count; t++) {
    const n = packed[at]!;
    const signatures = at + 1;
    const keys = signatures + n * 64;
    const length = packed.readUInt16LE(keys + n * 32);
    const message = packed.subarray(keys + n * 32 + 2, keys + n * 32 + 2 + length);
    let result = -1;
    for (let i = 0; i < n; i++) {
      const signature = packed.subarray(signatures + i * 64, signatures + (i + 1) * 64);
      if (!sodium.crypto_sign_verify_detached(signature, message, packed.subarray(keys + i * 32, keys + (i + 1) * 32))) {
        result = i | (isAllZero(signature) ? EMPTY_FLAG : 0);
        break;
      }
    }
    results[t] = result;
    at = keys + n * 32 + 2 + length;
  }
  return results;
}

parentPort?.on('message', ({ id, buffer, count }: { id: number; buffer: ArrayBuffer; count: number }) => {
  const results = verifyPacked(Buffer.from(buffer), count);
  parentPort!.postMessage({ id, results }, [results.buffer as ArrayBuffer]);
});
