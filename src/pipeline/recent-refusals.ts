/**
 * Refusals of the last minutes, by the refused transaction's signature, so that
 * `getSubmissionStatuses` can say why a signature a client holds never went anywhere
 * ("refused at validation: …"). In memory and bounded: refusals are never journaled, so a
 * flood of garbage cannot fill the disk.
 *
 * Kept per key and signature: the signature of a refused transaction was never verified, so
 * anyone can present anyone's; under one key's name it cannot replace another key's entry,
 * and each key reads only its own. Bounded per key, too: a key refused in a flood pushes out
 * its own oldest entries, never another key's. The reason is kept short (the refusal message
 * quotes the client).
 */
import type { OutcomeReason } from '../core/outcome-reasons';
import bs58 from 'bs58';
import { clip } from '../errors/client-text';
import { TtlMap } from './ttl-map';

/** Per key: what a client refused this often within the time kept can still ask about. */
const MAX_ENTRIES_PER_KEY = 10_000;
/** A kept reason's length: what the client was told, enough to act on. */
const MAX_REASON_CHARS = 240;

export interface Refusal {
  readonly keyId: string;
  readonly reason: string;
  readonly reasonCode: OutcomeReason;
  readonly at: number;
}

export class RecentRefusals {
  /** By key ID (authenticated keys only, so as many as the operator issued), then signature. */
  private readonly byKey = new Map<string, TtlMap<string, Refusal>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxPerKey = MAX_ENTRIES_PER_KEY,
  ) {}

  /** Records why the transaction whose Base64 is `encoded` was refused, if a signature can be read from it. */
  record(encoded: unknown, keyId: string, reason: string, reasonCode: OutcomeReason): void {
    if (typeof encoded !== 'string') return;
    const signature = readFirstSignature(encoded);
    if (signature === undefined) return;
    let entries = this.byKey.get(keyId);
    if (entries === undefined) {
      entries = new TtlMap(this.ttlMs, this.maxPerKey);
      this.byKey.set(keyId, entries);
    }
    entries.set(signature, { keyId, reason: clip(reason, MAX_REASON_CHARS), reasonCode, at: Date.now() });
  }

  /** Why `keyId`'s transaction with this signature was refused, if it was. */
  get(keyId: string, signature: string): Refusal | undefined {
    return this.byKey.get(keyId)?.get(signature);
  }
}

/** The base58 first signature of a wire transaction, read without validating anything else. */
function readFirstSignature(encoded: string): string | undefined {
  const bytes = Buffer.from(encoded.slice(0, 88), 'base64');
  if (bytes.length < 65 || bytes[0] === 0) return undefined;
  return bs58.encode(bytes.subarray(1, 65));
}
