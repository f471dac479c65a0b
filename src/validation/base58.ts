/**
 * Base58 (Bitcoin alphabet) encoding, fast enough for the hot path: every accepted
 * transaction's ID is its first signature in base58. The bs58 package converts one byte at a
 * time over the whole output (about 9 µs for a signature). This converts 16 bits at a time
 * into limbs of base 58^5, in numbers that stay below 2^46 (exact in a double), with no
 * BigInt and no intermediate string: twice as fast as the BigInt version it replaced, 4 to
 * 5 times bs58 (measured on 64-byte signatures). A test cross-checks it against bs58 on random
 * inputs, leading zeros included.
 */
const DIGITS = Buffer.from('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 'latin1');
const ONE = DIGITS[0]!;
/** 58^5: a limb is below it (under 2^30), so limb × 2^16 + carry stays below 2^46. */
const LIMB = 656_356_768;
const LIMB_DIGITS = 5;

/** Scratch, grown when a longer input comes: the hot path encodes 64 bytes, always. */
let limbs = new Int32Array(32);
let out = Buffer.allocUnsafe(128);

export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // 8 bits need at most 1.37 base-58 digits: size the scratch for the worst case.
  const maxDigits = zeros + Math.ceil((bytes.length - zeros) * 1.37) + LIMB_DIGITS;
  if (limbs.length * LIMB_DIGITS < maxDigits) limbs = new Int32Array(Math.ceil(maxDigits / LIMB_DIGITS) * 2);
  if (out.length < maxDigits) out = Buffer.allocUnsafe(maxDigits * 2);

  let size = 0; // limbs in use, least significant first
  let i = zeros;
  // An odd count of significant bytes: the first goes alone, the rest in pairs.
  if ((bytes.length - i) % 2 === 1) size = addChunk(size, 256, bytes[i++]!);
  for (; i < bytes.length; i += 2) size = addChunk(size, 65_536, (bytes[i]! << 8) | bytes[i + 1]!);

  // Digits from the end: every limb but the top one is written whole, with its zeros.
  let at = out.length;
  for (let l = 0; l < size; l++) {
    let limb = limbs[l]!;
    const top = l === size - 1;
    for (let k = 0; top ? limb > 0 : k < LIMB_DIGITS; k++) {
      const next = Math.floor(limb / 58);
      out[--at] = DIGITS[limb - next * 58]!;
      limb = next;
    }
  }
  out.fill(ONE, at - zeros, at);
  return out.toString('latin1', at - zeros, out.length);
}

/** Multiplies the number in `limbs` by `factor` and adds `chunk`; returns the new limb count. */
function addChunk(size: number, factor: number, chunk: number): number {
  let carry = chunk;
  for (let l = 0; l < size; l++) {
    const x = limbs[l]! * factor + carry;
    carry = Math.floor(x / LIMB);
    limbs[l] = x - carry * LIMB;
  }
  while (carry > 0) {
    const next = Math.floor(carry / LIMB);
    limbs[size++] = carry - next * LIMB;
    carry = next;
  }
  return size;
}
