/**
 * Refusals of the last minutes, by the refused transaction's signature, so that
 * `getSubmissionStatuses` can say why a signature a client holds never went anywhere
 * ("refused at validation: …"). In memory and bounded: refusals are never journaled, so a
 * flood of garbage cannot fill the disk.
 */
import bs58 from 'bs58';
import { TtlMap } from './ttl-map';

const MAX_ENTRIES = 100_000;

export interface Refusal {
  readonly keyId: string;
  readonly reason: string;
  readonly at: number;
}

export class RecentRefusals {
  private readonly bySignature: TtlMap<string, Refusal>;

  constructor(ttlMs: number) {
    this.bySignature = new TtlMap(ttlMs, MAX_ENTRIES);
  }

  /** Records why the transaction whose Base64 is `encoded` was refused, if a signature can be read from it. */
  record(encoded: unknown, keyId: string, reason: string): void {
    if (typeof encoded !== 'string') return;
    const signature = readFirstSignature(encoded);
    if (signature !== undefined) this.bySignature.set(signature, { keyId, reason, at: Date.now() });
  }

  get(signature: string): Refusal | undefined {
    return this.bySignature.get(signature);
  }
}

/** The base58 first signature of a wire transaction, read without validating anything else. */
function readFirstSignature(encoded: string): string | undefined {
  const bytes = Buffer.from(encoded.slice(0, 88), 'base64');
  if (bytes.length < 65 || bytes[0] === 0) return undefined;
  return bs58.encode(bytes.subarray(1, 65));
}
