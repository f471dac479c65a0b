/**
 * Base58 (Bitcoin alphabet) encoding, fast enough for the hot path: every accepted
 * transaction's ID is its first signature in base58. The bs58 package converts one byte at a
 * time over the whole output (about 9 µs for a signature); this reads the bytes as one
 * BigInt and peels off nine digits per division (about 2.3 µs). A test cross-checks it
 * against bs58 on random inputs, leading zeros included.
 */
const DIGITS = Buffer.from('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 'latin1');
/** 58^9 < 2^53: the remainder of a division by it is exact as a Number. */
const CHUNK = 58n ** 9n;
const ONE = DIGITS[0]!;

export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = zeros === bytes.length ? 0n : BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex')}`);
  // Digits, least significant first, written from the end of the buffer (at most 1.37 per byte).
  const out = Buffer.allocUnsafe(zeros + bytes.length * 2);
  let at = out.length;
  while (n > 0n) {
    const quotient = n / CHUNK;
    let chunk = Number(n - quotient * CHUNK);
    n = quotient;
    // Inner chunks are written whole (with their zeros); the leading one without.
    for (let k = 0; n > 0n ? k < 9 : chunk > 0; k++) {
      const next = Math.floor(chunk / 58);
      out[--at] = DIGITS[chunk - next * 58]!;
      chunk = next;
    }
  }
  out.fill(ONE, at - zeros, at);
  return out.toString('latin1', at - zeros, out.length);
}
