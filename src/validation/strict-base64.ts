/**
 * Strict, canonical Base64 (RFC 4648 standard alphabet, with padding), as the `base64`
 * crate's STANDARD engine that Agave uses: Node's own decoder silently skips characters
 * it does not know, which would let two different strings name one transaction.
 * Error texts copy the Rust crate's `Debug` output so they read as a Solana node's.
 */
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;
const PAD = 61; // '='

/** Why `text` is not canonical Base64, in the crate's words, or null when it is. */
export function findBase64Defect(text: string): string | null {
  const length = text.length;
  let padding = 0;
  if (length > 0 && text.charCodeAt(length - 1) === PAD) padding = length > 1 && text.charCodeAt(length - 2) === PAD ? 2 : 1;
  const dataLength = length - padding;
  for (let i = 0; i < dataLength; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || VALUE[c] === -1) return `InvalidByte(${i}, ${c})`;
  }
  if (length % 4 !== 0) return 'InvalidLength';
  if (padding > 0) {
    // The last data symbol must not carry bits beyond the decoded bytes.
    const last = VALUE[text.charCodeAt(dataLength - 1)]!;
    const unusedBitsMask = padding === 1 ? 0b11 : 0b1111;
    if ((last & unusedBitsMask) !== 0) return `InvalidLastSymbol(${dataLength - 1}, ${text.charCodeAt(dataLength - 1)})`;
  }
  return null;
}

/**
 * Decodes canonical Base64 or refuses with Agave's `invalid base64 encoding: …`. Every byte
 * string has exactly one canonical encoding, so text that Node's (lenient) decoder turns
 * into bytes encoding back to the same text is canonical: a third of the cost of checking
 * each character here (on every submission); only a refusal pays for finding the defect.
 */
export function decodeStrictBase64(text: string): Result<Buffer> {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') === text) return ok(bytes);
  const defect = findBase64Defect(text) ?? 'InvalidLength';
  return fail(slipwayError('INVALID_PARAMS', `invalid base64 encoding: ${defect}`));
}
