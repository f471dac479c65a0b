/**
 * The QUIC fuzz's one source of chance: a small seeded generator (mulberry32, whose whole
 * state is one number) and the mutations it applies to bytes. Everything a fuzz case does, the state
 * machines' own randomness included, comes from one of these, so a seed replays a case
 * byte for byte.
 */

/** Interesting values for a byte, a length or a varint's first byte. */
const EDGE_BYTES = [0x00, 0x01, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xfe, 0xff];

export class FuzzRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The next 32 bits. */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.next() / 2 ** 32) * n);
  }

  chance(p: number): boolean {
    return this.next() / 2 ** 32 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  bytes(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i++) out[i] = this.next() & 0xff;
    return out;
  }

  /** A number a length or offset field may hold: small, near a boundary, or huge. */
  wideNumber(): number {
    return this.pick([
      0,
      1,
      this.int(64),
      this.int(1_500),
      this.int(70_000),
      2 ** 14 - 1,
      2 ** 30 - 1,
      2 ** 32,
      2 ** 53 - 1,
      this.int(2 ** 31),
    ]);
  }

  /** A seed for a case of its own, from this generator's stream. */
  fork(): FuzzRandom {
    return new FuzzRandom(this.next());
  }
}

/** `data` with one to four mutations: bits flipped, bytes set to edge values, ranges cut, copied, inserted or the end cut off. */
export function mutate(random: FuzzRandom, data: Buffer): Buffer {
  let out = Buffer.from(data);
  const count = 1 + random.int(4);
  for (let i = 0; i < count; i++) {
    const at = random.int(Math.max(1, out.length));
    switch (random.int(8)) {
      case 0:
        if (out.length > 0) out[at] = out[at]! ^ (1 << random.int(8));
        break;
      case 1:
        if (out.length > 0) out[at] = random.pick(EDGE_BYTES);
        break;
      case 2:
        out = Buffer.concat([out.subarray(0, at), random.bytes(1 + random.int(40)), out.subarray(at)]);
        break;
      case 3:
        out = Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + 1 + random.int(64)))]);
        break;
      case 4:
        out = out.subarray(0, at);
        break;
      case 5: {
        // A length field made huge or zero: two or three bytes at once.
        const width = 2 + random.int(2);
        for (let j = 0; j < width && at + j < out.length; j++) out[at + j] = random.chance(0.5) ? 0xff : 0x00;
        break;
      }
      case 6: {
        const from = random.int(Math.max(1, out.length));
        out = Buffer.concat([out.subarray(0, at), out.subarray(from, from + 1 + random.int(200)), out.subarray(at)]);
        break;
      }
      default:
        if (out.length > 0) out[at] = random.next() & 0xff;
    }
  }
  return out;
}
