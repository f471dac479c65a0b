/**
 * QUIC v1 frames (RFC 9000 §19): every frame type parsed from a decrypted payload, with the
 * packet types each may appear in (§12.4), and the writers the send path uses. A frame that
 * does not parse, or appears where it may not, is a connection error with the code the RFC
 * gives; nothing here throws anything but `QuicError`.
 */
import { QuicError, Reader, TRANSPORT_ERROR, varintLength, writeVarint } from './wire';

/** An acknowledged range of packet numbers, inclusive. */
export interface AckRange {
  readonly smallest: number;
  readonly largest: number;
}

export type Frame =
  | { readonly type: 'padding' }
  | { readonly type: 'ping' }
  /** `ranges` from the largest down; `delay` in the peer's units (scaled by its ack_delay_exponent). */
  | { readonly type: 'ack'; readonly ranges: AckRange[]; readonly delay: number; readonly ecn?: readonly [number, number, number] }
  | { readonly type: 'reset-stream'; readonly streamId: number; readonly code: number; readonly finalSize: number }
  | { readonly type: 'stop-sending'; readonly streamId: number; readonly code: number }
  | { readonly type: 'crypto'; readonly offset: number; readonly data: Buffer }
  | { readonly type: 'new-token'; readonly token: Buffer }
  | { readonly type: 'stream'; readonly streamId: number; readonly offset: number; readonly data: Buffer; readonly fin: boolean }
  | { readonly type: 'max-data'; readonly maximum: number }
  | { readonly type: 'max-stream-data'; readonly streamId: number; readonly maximum: number }
  | { readonly type: 'max-streams'; readonly bidi: boolean; readonly maximum: number }
  | { readonly type: 'data-blocked'; readonly limit: number }
  | { readonly type: 'stream-data-blocked'; readonly streamId: number; readonly limit: number }
  | { readonly type: 'streams-blocked'; readonly bidi: boolean; readonly limit: number }
  | {
      readonly type: 'new-connection-id';
      readonly sequence: number;
      readonly retirePriorTo: number;
      readonly connectionId: Buffer;
      readonly resetToken: Buffer;
    }
  | { readonly type: 'retire-connection-id'; readonly sequence: number }
  | { readonly type: 'path-challenge'; readonly data: Buffer }
  | { readonly type: 'path-response'; readonly data: Buffer }
  | {
      readonly type: 'connection-close';
      readonly application: boolean;
      readonly code: number;
      readonly frameType: number;
      readonly reason: string;
    }
  | { readonly type: 'handshake-done' };

/** 2^62: stream offsets and credits may not reach it (RFC 9000 §19.8). */
const MAX_OFFSET = 2 ** 62;
const MAX_STREAMS = 2 ** 60;

/** Whether a frame may appear in an Initial or Handshake packet (RFC 9000 §12.4, Table 3). */
export function allowedInLongHeader(frame: Frame): boolean {
  return (
    frame.type === 'padding' ||
    frame.type === 'ping' ||
    frame.type === 'ack' ||
    frame.type === 'crypto' ||
    (frame.type === 'connection-close' && !frame.application)
  );
}

/** Whether a packet with only these frames is ack-eliciting (RFC 9002 §2). */
export function isAckEliciting(frames: readonly Frame[]): boolean {
  return frames.some((frame) => frame.type !== 'ack' && frame.type !== 'padding' && frame.type !== 'connection-close');
}

/** Parses the payload of an Initial, Handshake or 1-RTT packet, refusing a frame its type may not carry (RFC 9000 §12.4). */
export function parsePacketFrames(payload: Buffer, packetType: 'initial' | 'handshake' | 'one-rtt'): Frame[] {
  const frames = parseFrames(payload);
  if (packetType !== 'one-rtt')
    for (const frame of frames)
      if (!allowedInLongHeader(frame))
        throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, `a ${frame.type} frame in a ${packetType} packet`);
  return frames;
}

/** Parses every frame of a decrypted payload. */
export function parseFrames(payload: Buffer): Frame[] {
  const reader = new Reader(payload, 0, payload.length, TRANSPORT_ERROR.FRAME_ENCODING_ERROR);
  const frames: Frame[] = [];
  if (payload.length === 0) throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, 'a packet with no frames');
  while (reader.remaining > 0) {
    const type = reader.varint('frame type');
    frames.push(parseFrame(type, reader));
  }
  return frames;
}

function parseFrame(type: number, reader: Reader): Frame {
  const fail = (message: string, code: number = TRANSPORT_ERROR.FRAME_ENCODING_ERROR) => new QuicError(code, message, type);
  switch (type) {
    case 0x00:
      // A run of padding is one frame: skip it at once.
      while (reader.remaining > 0 && reader.buffer[reader.offset] === 0) reader.offset++;
      return { type: 'padding' };
    case 0x01:
      return { type: 'ping' };
    case 0x02:
    case 0x03: {
      const largest = reader.varint('largest acknowledged');
      const delay = reader.varint('ack delay');
      const count = reader.varint('ack range count');
      let smallest = largest - reader.varint('first ack range');
      if (smallest < 0) throw fail('an ACK range below packet number 0');
      const ranges: AckRange[] = [{ smallest, largest }];
      for (let i = 0; i < count; i++) {
        const gap = reader.varint('ack gap');
        const length = reader.varint('ack range length');
        const top = smallest - gap - 2;
        if (top - length < 0) throw fail('an ACK range below packet number 0');
        ranges.push({ smallest: top - length, largest: top });
        smallest = top - length;
      }
      if (type === 0x03) return { type: 'ack', ranges, delay, ecn: [reader.varint(), reader.varint(), reader.varint()] };
      return { type: 'ack', ranges, delay };
    }
    case 0x04:
      return { type: 'reset-stream', streamId: reader.varint(), code: reader.varint(), finalSize: reader.varint() };
    case 0x05:
      return { type: 'stop-sending', streamId: reader.varint(), code: reader.varint() };
    case 0x06: {
      const offset = reader.varint('crypto offset');
      const data = reader.bytes(reader.varint('crypto length'), 'crypto data');
      if (offset + data.length >= MAX_OFFSET) throw fail('CRYPTO data past 2^62', TRANSPORT_ERROR.FRAME_ENCODING_ERROR);
      return { type: 'crypto', offset, data };
    }
    case 0x07: {
      const token = reader.bytes(reader.varint('token length'), 'token');
      if (token.length === 0) throw fail('an empty NEW_TOKEN');
      return { type: 'new-token', token };
    }
    case 0x08:
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x0e:
    case 0x0f: {
      const streamId = reader.varint('stream id');
      const offset = (type & 0x04) !== 0 ? reader.varint('stream offset') : 0;
      const data = (type & 0x02) !== 0 ? reader.bytes(reader.varint('stream length'), 'stream data') : reader.rest();
      if (offset + data.length >= MAX_OFFSET) throw fail('STREAM data past 2^62', TRANSPORT_ERROR.FLOW_CONTROL_ERROR);
      return { type: 'stream', streamId, offset, data, fin: (type & 0x01) !== 0 };
    }
    case 0x10:
      return { type: 'max-data', maximum: reader.varint() };
    case 0x11:
      return { type: 'max-stream-data', streamId: reader.varint(), maximum: reader.varint() };
    case 0x12:
    case 0x13: {
      const maximum = reader.varint();
      if (maximum > MAX_STREAMS) throw fail('MAX_STREAMS above 2^60');
      return { type: 'max-streams', bidi: type === 0x12, maximum };
    }
    case 0x14:
      return { type: 'data-blocked', limit: reader.varint() };
    case 0x15:
      return { type: 'stream-data-blocked', streamId: reader.varint(), limit: reader.varint() };
    case 0x16:
    case 0x17: {
      const limit = reader.varint();
      if (limit > MAX_STREAMS) throw fail('STREAMS_BLOCKED above 2^60');
      return { type: 'streams-blocked', bidi: type === 0x16, limit };
    }
    case 0x18: {
      const sequence = reader.varint();
      const retirePriorTo = reader.varint();
      const length = reader.u8();
      if (length < 1 || length > 20) throw fail('a NEW_CONNECTION_ID of a length outside 1..20');
      if (retirePriorTo > sequence) throw fail('NEW_CONNECTION_ID retires past its own sequence number');
      return { type: 'new-connection-id', sequence, retirePriorTo, connectionId: reader.bytes(length), resetToken: reader.bytes(16) };
    }
    case 0x19:
      return { type: 'retire-connection-id', sequence: reader.varint() };
    case 0x1a:
      return { type: 'path-challenge', data: reader.bytes(8) };
    case 0x1b:
      return { type: 'path-response', data: reader.bytes(8) };
    case 0x1c:
    case 0x1d: {
      const code = reader.varint();
      const frameType = type === 0x1c ? reader.varint() : 0;
      const reason = reader.bytes(reader.varint('reason length'), 'reason').toString('utf8');
      return { type: 'connection-close', application: type === 0x1d, code, frameType, reason };
    }
    case 0x1e:
      return { type: 'handshake-done' };
    default:
      throw fail(`unknown frame type 0x${type.toString(16)}`);
  }
}

// Writers: each writes at `offset` of `buffer` and returns the offset after it.

/** An ACK frame of `ranges` (largest first, disjoint, descending). */
export function writeAck(buffer: Buffer, offset: number, ranges: readonly AckRange[], delay: number): number {
  const first = ranges[0]!;
  let at = writeVarint(buffer, offset, 0x02);
  at = writeVarint(buffer, at, first.largest);
  at = writeVarint(buffer, at, delay);
  at = writeVarint(buffer, at, ranges.length - 1);
  at = writeVarint(buffer, at, first.largest - first.smallest);
  let smallest = first.smallest;
  for (let i = 1; i < ranges.length; i++) {
    const range = ranges[i]!;
    at = writeVarint(buffer, at, smallest - range.largest - 2);
    at = writeVarint(buffer, at, range.largest - range.smallest);
    smallest = range.smallest;
  }
  return at;
}

export function ackLength(ranges: readonly AckRange[], delay: number): number {
  const first = ranges[0]!;
  let length =
    1 + varintLength(first.largest) + varintLength(delay) + varintLength(ranges.length - 1) + varintLength(first.largest - first.smallest);
  let smallest = first.smallest;
  for (let i = 1; i < ranges.length; i++) {
    const range = ranges[i]!;
    length += varintLength(smallest - range.largest - 2) + varintLength(range.largest - range.smallest);
    smallest = range.smallest;
  }
  return length;
}

export function writeCrypto(buffer: Buffer, offset: number, cryptoOffset: number, data: Buffer): number {
  let at = writeVarint(buffer, offset, 0x06);
  at = writeVarint(buffer, at, cryptoOffset);
  at = writeVarint(buffer, at, data.length);
  return at + data.copy(buffer, at);
}

export function cryptoOverhead(cryptoOffset: number, length: number): number {
  return 1 + varintLength(cryptoOffset) + varintLength(length);
}

/** A STREAM frame with an explicit length (so that more frames may follow). */
export function writeStream(buffer: Buffer, offset: number, streamId: number, streamOffset: number, data: Buffer, fin: boolean): number {
  let at = writeVarint(buffer, offset, 0x08 | (streamOffset > 0 ? 0x04 : 0) | 0x02 | (fin ? 0x01 : 0));
  at = writeVarint(buffer, at, streamId);
  if (streamOffset > 0) at = writeVarint(buffer, at, streamOffset);
  at = writeVarint(buffer, at, data.length);
  return at + data.copy(buffer, at);
}

export function streamOverhead(streamId: number, streamOffset: number, length: number): number {
  return 1 + varintLength(streamId) + (streamOffset > 0 ? varintLength(streamOffset) : 0) + varintLength(length);
}

/** A frame of only varints: MAX_DATA, MAX_STREAMS, RETIRE_CONNECTION_ID, DATA_BLOCKED… */
export function writeVarintFrame(buffer: Buffer, offset: number, type: number, ...values: number[]): number {
  let at = writeVarint(buffer, offset, type);
  for (const value of values) at = writeVarint(buffer, at, value);
  return at;
}

export function writeConnectionClose(
  buffer: Buffer,
  offset: number,
  application: boolean,
  code: number,
  frameType: number,
  reason: string,
): number {
  // The reason is for people reading logs: kept short so that the frame fits any packet.
  const text = Buffer.from(reason.slice(0, 100), 'utf8');
  let at = writeVarint(buffer, offset, application ? 0x1d : 0x1c);
  at = writeVarint(buffer, at, code);
  if (!application) at = writeVarint(buffer, at, frameType);
  at = writeVarint(buffer, at, text.length);
  return at + text.copy(buffer, at);
}
