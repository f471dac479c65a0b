/**
 * TLS's presentation language (RFC 8446 §3): big-endian integers and vectors with a 1-, 2- or
 * 3-byte length prefix. The reader checks every length against what is left, so a peer's
 * bytes can only ever end in a decode_error alert, never in a RangeError or a read past the end.
 */
import { ALERT, TlsAlert } from './alert';

export class TlsReader {
  private offset = 0;

  constructor(
    private readonly data: Buffer,
    /** What is being read, for the alert's message. */
    private readonly what: string,
  ) {}

  get remaining(): number {
    return this.data.length - this.offset;
  }

  u8(): number {
    return this.take(1)[0]!;
  }

  u16(): number {
    return this.take(2).readUInt16BE(0);
  }

  u24(): number {
    return this.take(3).readUIntBE(0, 3);
  }

  take(length: number): Buffer {
    if (length > this.remaining) throw this.fail(`${length} bytes needed, ${this.remaining} left`);
    const bytes = this.data.subarray(this.offset, this.offset + length);
    this.offset += length;
    return bytes;
  }

  /** A vector with a `prefix`-byte length whose size must lie in [min, max] (RFC 8446 §3.4). */
  vector(prefix: 1 | 2 | 3, min = 0, max = 2 ** (8 * prefix) - 1): Buffer {
    const length = prefix === 1 ? this.u8() : prefix === 2 ? this.u16() : this.u24();
    if (length < min || length > max) throw this.fail(`a vector of ${length} bytes, outside [${min}, ${max}]`);
    return this.take(length);
  }

  /** The same, read on by its own reader. */
  sub(prefix: 1 | 2 | 3, what: string, min = 0, max?: number): TlsReader {
    return new TlsReader(this.vector(prefix, min, max), what);
  }

  /** A list of 16-bit values in a vector of `prefix` bytes, at least `minItems` of them. */
  u16List(prefix: 1 | 2, minItems = 1): number[] {
    const bytes = this.vector(prefix, 2 * minItems);
    if (bytes.length % 2 !== 0) throw this.fail('a list of 16-bit values of odd length');
    const values: number[] = [];
    for (let i = 0; i < bytes.length; i += 2) values.push(bytes.readUInt16BE(i));
    return values;
  }

  /** Everything must have been read: trailing bytes are as wrong as missing ones. */
  end(): void {
    if (this.remaining !== 0) throw this.fail(`${this.remaining} bytes left over`);
  }

  fail(reason: string): TlsAlert {
    return new TlsAlert(ALERT.decodeError, `${this.what}: ${reason}`);
  }
}

export function u8(value: number): Buffer {
  return Buffer.of(value);
}

export function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  return bytes;
}

/** A vector: the bytes after their length in `prefix` bytes. */
export function vector(prefix: 1 | 2 | 3, ...parts: Uint8Array[]): Buffer {
  const body = Buffer.concat(parts);
  if (body.length >= 2 ** (8 * prefix)) throw new RangeError(`${body.length} bytes do not fit a ${prefix}-byte length`);
  const length = Buffer.alloc(prefix);
  length.writeUIntBE(body.length, 0, prefix);
  return Buffer.concat([length, body]);
}

export function u16Vector(prefix: 1 | 2, values: readonly number[]): Buffer {
  return vector(prefix, ...values.map(u16));
}
