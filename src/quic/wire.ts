/**
 * Reading and writing QUIC's wire encoding: variable-length integers (RFC 9000 §16) and a
 * bounded reader. Every parse of a peer's bytes goes through `Reader`, which throws a
 * `QuicError` (never a RangeError) the moment a length points past the end, so that a
 * hostile packet becomes a connection error or a dropped packet, never an exception.
 */

/** Transport error codes (RFC 9000 §20.1) that parsing can raise. */
export const TRANSPORT_ERROR = {
  NO_ERROR: 0x00,
  INTERNAL_ERROR: 0x01,
  CONNECTION_REFUSED: 0x02,
  FLOW_CONTROL_ERROR: 0x03,
  STREAM_LIMIT_ERROR: 0x04,
  STREAM_STATE_ERROR: 0x05,
  FINAL_SIZE_ERROR: 0x06,
  FRAME_ENCODING_ERROR: 0x07,
  TRANSPORT_PARAMETER_ERROR: 0x08,
  CONNECTION_ID_LIMIT_ERROR: 0x09,
  PROTOCOL_VIOLATION: 0x0a,
  INVALID_TOKEN: 0x0b,
  CRYPTO_BUFFER_EXCEEDED: 0x0d,
  KEY_UPDATE_ERROR: 0x0e,
  AEAD_LIMIT_REACHED: 0x0f,
  /** 0x0100 + a TLS alert. */
  CRYPTO_ERROR: 0x100,
} as const;

/** A protocol error: `code` is the transport error code to close the connection with. */
export class QuicError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** The frame type that caused it, for CONNECTION_CLOSE. */
    readonly frameType = 0,
  ) {
    super(message);
  }
}

/** Largest value a varint holds, 2^62 - 1, as the nearest number (JavaScript numbers are exact to 2^53). */
export const MAX_VARINT = 2 ** 62 - 1;

export function varintLength(value: number): 1 | 2 | 4 | 8 {
  if (value < 0x40) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x40000000) return 4;
  return 8;
}

/** Writes `value` at `offset` in its shortest form; returns the offset after it. */
export function writeVarint(buffer: Buffer, offset: number, value: number): number {
  if (value < 0x40) {
    buffer[offset] = value;
    return offset + 1;
  }
  if (value < 0x4000) {
    buffer.writeUInt16BE(0x4000 | value, offset);
    return offset + 2;
  }
  if (value < 0x40000000) {
    buffer.writeUInt32BE((0x80000000 | value) >>> 0, offset);
    return offset + 4;
  }
  buffer.writeBigUInt64BE(0xc000000000000000n | BigInt(Math.min(value, MAX_VARINT)), offset);
  return offset + 8;
}

export function encodeVarint(value: number): Buffer {
  const buffer = Buffer.allocUnsafe(varintLength(value));
  writeVarint(buffer, 0, value);
  return buffer;
}

/** A cursor over a peer's bytes; each read checks the bounds and throws `QuicError(code)` past the end. */
export class Reader {
  offset: number;
  constructor(
    readonly buffer: Buffer,
    offset = 0,
    private readonly end = buffer.length,
    /** The error code for a read past the end. */
    private readonly code: number = TRANSPORT_ERROR.FRAME_ENCODING_ERROR,
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(length: number, what: string): void {
    if (length > this.end - this.offset) throw new QuicError(this.code, `${what}: ${length} bytes needed, ${this.end - this.offset} left`);
  }

  u8(what = 'a byte'): number {
    this.need(1, what);
    return this.buffer[this.offset++]!;
  }

  u16(what = 'a 16-bit integer'): number {
    this.need(2, what);
    const value = this.buffer.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  u24(what = 'a 24-bit integer'): number {
    this.need(3, what);
    const value = this.buffer.readUIntBE(this.offset, 3);
    this.offset += 3;
    return value;
  }

  u32(what = 'a 32-bit integer'): number {
    this.need(4, what);
    const value = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  varint(what = 'a variable-length integer'): number {
    this.need(1, what);
    const first = this.buffer[this.offset]!;
    const length = 1 << (first >> 6);
    this.need(length, what);
    let value: number;
    if (length === 1) value = first;
    else if (length === 2) value = this.buffer.readUInt16BE(this.offset) & 0x3fff;
    else if (length === 4) value = this.buffer.readUInt32BE(this.offset) & 0x3fffffff;
    else value = Number(this.buffer.readBigUInt64BE(this.offset) & 0x3fffffffffffffffn);
    this.offset += length;
    return value;
  }

  bytes(length: number, what = 'bytes'): Buffer {
    this.need(length, what);
    const value = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  rest(): Buffer {
    return this.bytes(this.end - this.offset);
  }
}
