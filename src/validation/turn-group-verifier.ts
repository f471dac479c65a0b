/**
 * Verification in the request thread, the transactions of one turn of the event loop as one
 * group: each `verify` waits until the turn's I/O callbacks have run (`setImmediate`), then
 * every transaction that came in that turn is checked by one call to the native verifier
 * (about half of libsodium's cost a signature from a handful on; one alone costs what it
 * did). A group that fails is verified one transaction at a time, to say which and why.
 *
 * Why not always the verification thread: at a moderate rate its groups are small (one or
 * two transactions), the hand-off wakes it and the request thread for each, and on a small
 * machine the thread competes with the request thread for a core (measured: a third of a
 * core at 8,000 requests/s on two cores, and the request thread waiting for a core 7–30 % of
 * the time). Where the native verifier was not built, verification is done at once, one
 * transaction at a time, as before.
 */
import { performance } from 'node:perf_hooks';
import { nativeEd25519 } from './native-ed25519';
import type { SignatureVerifier } from './transaction-validator';
import { verifyTransactionSignatures, type SignatureCheck } from './verify-signatures';
import { GROUP_MAX, PACKED_MAX_BYTES, packTransaction } from './verify-worker';
import type { WireTransaction } from './wire-transaction';

const VALID: SignatureCheck = { valid: true };

interface Waiting {
  readonly wire: WireTransaction;
  readonly resolve: (check: SignatureCheck) => void;
}

/** `onVerified(signatures, ms)` hears of the time each group took (the offload switch's estimate of inline cost). */
export function createTurnGroupVerifier(onVerified: (signatures: number, ms: number) => void = () => {}): SignatureVerifier {
  const native = nativeEd25519;
  const packed = Buffer.allocUnsafe(GROUP_MAX * PACKED_MAX_BYTES);
  const offsets = new Int32Array(GROUP_MAX);
  const lengths = new Int32Array(GROUP_MAX);
  let waiting: Waiting[] = [];

  const one = (wire: WireTransaction): SignatureCheck => {
    const started = performance.now();
    const check = verifyTransactionSignatures(wire);
    onVerified(wire.signatures.length, performance.now() - started);
    return check;
  };

  /** Verifies up to GROUP_MAX transactions as one group; one at a time when the group fails. */
  const group = (members: readonly Waiting[]): void => {
    if (members.length === 1) return members[0]!.resolve(one(members[0]!.wire));
    const started = performance.now();
    let at = 0;
    let signatures = 0;
    members.forEach(({ wire }, i) => {
      offsets[i] = at;
      lengths[i] = packTransaction(wire, packed.subarray(at, at + PACKED_MAX_BYTES));
      at += lengths[i]!;
      signatures += wire.signatures.length;
    });
    const verdict = native!.verifyPacked(packed, offsets, lengths, members.length);
    onVerified(signatures, performance.now() - started);
    // 0: one signature at least is bad; -1: no randomness for the weights. Either way, one at a time.
    for (const member of members) member.resolve(verdict === 1 ? VALID : one(member.wire));
  };

  const flush = (): void => {
    const turn = waiting;
    waiting = [];
    for (let from = 0; from < turn.length; from += GROUP_MAX) group(turn.slice(from, from + GROUP_MAX));
  };

  return {
    verify(wire) {
      if (native === null) return Promise.resolve(one(wire));
      return new Promise((resolve) => {
        if (waiting.length === 0) setImmediate(flush);
        waiting.push({ wire, resolve });
      });
    },
    close: async () => {},
  };
}
