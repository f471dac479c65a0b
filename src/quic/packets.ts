/**
 * QUIC v1 packet headers (RFC 9000 §17): a datagram split into its coalesced packets, each
 * header read up to its (still protected) packet number, and headers built for sending.
 * Nothing here decrypts: `packet-protection.ts` does, once the header says with what.
 */
import { Reader, TRANSPORT_ERROR, varintLength, writeVarint } from './wire';

export const QUIC_V1 = 0x00000001;
export const MAX_CID_LENGTH = 20;

export type LongType = 'initial' | 'zero-rtt' | 'handshake' | 'retry';
const LONG_TYPES: readonly LongType[] = ['initial', 'zero-rtt', 'handshake', 'retry'];
const LONG_TYPE_BITS: Record<LongType, number> = { initial: 0, 'zero-rtt': 1, handshake: 2, retry: 3 };

export type ParsedPacket =
  | {
      readonly type: 'initial' | 'zero-rtt' | 'handshake';
      readonly version: number;
      readonly dcid: Buffer;
      readonly scid: Buffer;
      readonly token: Buffer;
      /** The whole packet, header to tag. */
      readonly packet: Buffer;
      readonly pnOffset: number;
    }
  | { readonly type: 'one-rtt'; readonly dcid: Buffer; readonly packet: Buffer; readonly pnOffset: number }
  | {
      readonly type: 'retry';
      readonly version: number;
      readonly dcid: Buffer;
      readonly scid: Buffer;
      readonly token: Buffer;
      readonly packet: Buffer;
    }
  | { readonly type: 'version-negotiation'; readonly dcid: Buffer; readonly scid: Buffer; readonly versions: number[] }
  /** A long header of a version this endpoint does not speak: only its connection IDs are known. */
  | { readonly type: 'unsupported-version'; readonly version: number; readonly dcid: Buffer; readonly scid: Buffer };

/**
 * The packets coalesced in `datagram` (RFC 9000 §12.2). `shortCidLength` is the length of
 * the connection IDs this endpoint issued (a short header does not say). Parsing stops at the
 * first packet that does not parse; what parsed before it is returned (RFC 9000 §12.2 lets a
 * receiver drop the rest).
 */
export function splitDatagram(datagram: Buffer, shortCidLength: number): ParsedPacket[] {
  const packets: ParsedPacket[] = [];
  let offset = 0;
  while (offset < datagram.length) {
    try {
      const parsed = parseOne(datagram, offset, shortCidLength);
      if (parsed === null) break;
      packets.push(parsed.packet);
      offset = parsed.end;
    } catch {
      break;
    }
  }
  return packets;
}

function parseOne(datagram: Buffer, start: number, shortCidLength: number): { packet: ParsedPacket; end: number } | null {
  const reader = new Reader(datagram, start, datagram.length, TRANSPORT_ERROR.PROTOCOL_VIOLATION);
  const first = reader.u8();
  if ((first & 0x80) === 0) {
    // Short header: the rest of the datagram. The fixed bit must be set (RFC 9000 §17.3.1).
    if ((first & 0x40) === 0) return null;
    const dcid = reader.bytes(shortCidLength, 'destination connection ID');
    return { packet: { type: 'one-rtt', dcid, packet: datagram.subarray(start), pnOffset: reader.offset - start }, end: datagram.length };
  }
  const version = reader.u32('version');
  const dcidLength = reader.u8();
  const dcid = reader.bytes(dcidLength, 'destination connection ID');
  const scidLength = reader.u8();
  const scid = reader.bytes(scidLength, 'source connection ID');
  if (version === 0) {
    const versions: number[] = [];
    while (reader.remaining >= 4) versions.push(reader.u32());
    return { packet: { type: 'version-negotiation', dcid, scid, versions }, end: datagram.length };
  }
  if (version !== QUIC_V1) return { packet: { type: 'unsupported-version', version, dcid, scid }, end: datagram.length };
  if (dcidLength > MAX_CID_LENGTH || scidLength > MAX_CID_LENGTH || (first & 0x40) === 0) return null;
  const type = LONG_TYPES[(first >> 4) & 0x03]!;
  if (type === 'retry') {
    const token = reader.bytes(Math.max(0, reader.remaining - 16), 'retry token');
    reader.bytes(16, 'retry integrity tag');
    return { packet: { type, version, dcid, scid, token, packet: datagram.subarray(start) }, end: datagram.length };
  }
  const token = type === 'initial' ? reader.bytes(reader.varint('token length'), 'token') : Buffer.alloc(0);
  const length = reader.varint('length');
  const pnOffset = reader.offset - start;
  const body = reader.bytes(length, 'packet payload');
  const end = body.byteOffset - datagram.byteOffset + length;
  return { packet: { type, version, dcid, scid, token, packet: datagram.subarray(start, end), pnOffset }, end };
}

/**
 * A long header up to and including its packet number; `payloadLength` is the length of what
 * follows the packet number (frames and AEAD tag). Returns it with the packet number's offset.
 */
export function longHeader(options: {
  readonly type: 'initial' | 'handshake';
  readonly dcid: Buffer;
  readonly scid: Buffer;
  readonly token?: Buffer;
  readonly packetNumber: number;
  readonly pnLength: 1 | 2 | 3 | 4;
  readonly payloadLength: number;
}): { header: Buffer; pnOffset: number } {
  const { dcid, scid, pnLength } = options;
  const token = options.type === 'initial' ? (options.token ?? Buffer.alloc(0)) : undefined;
  const length = pnLength + options.payloadLength;
  // The length field takes at least two bytes, so that a header's size does not depend on a short payload.
  const lengthBytes = Math.max(2, varintLength(length));
  const size =
    1 +
    4 +
    1 +
    dcid.length +
    1 +
    scid.length +
    (token === undefined ? 0 : varintLength(token.length) + token.length) +
    lengthBytes +
    pnLength;
  const header = Buffer.allocUnsafe(size);
  header[0] = 0xc0 | (LONG_TYPE_BITS[options.type] << 4) | (pnLength - 1);
  header.writeUInt32BE(QUIC_V1, 1);
  let at = 5;
  header[at++] = dcid.length;
  at += dcid.copy(header, at);
  header[at++] = scid.length;
  at += scid.copy(header, at);
  if (token !== undefined) {
    at = writeVarint(header, at, token.length);
    at += token.copy(header, at);
  }
  if (lengthBytes === 2) {
    header.writeUInt16BE(0x4000 | length, at);
    at += 2;
  } else at = writeVarint(header, at, length);
  header.writeUIntBE(options.packetNumber % 2 ** (8 * pnLength), at, pnLength);
  return { header, pnOffset: at };
}

/** A short (1-RTT) header up to and including its packet number. */
export function shortHeader(
  dcid: Buffer,
  packetNumber: number,
  pnLength: 1 | 2 | 3 | 4,
  keyPhase: 0 | 1,
): { header: Buffer; pnOffset: number } {
  const header = Buffer.allocUnsafe(1 + dcid.length + pnLength);
  header[0] = 0x40 | (keyPhase << 2) | (pnLength - 1);
  dcid.copy(header, 1);
  header.writeUIntBE(packetNumber % 2 ** (8 * pnLength), 1 + dcid.length, pnLength);
  return { header, pnOffset: 1 + dcid.length };
}

/** A Retry packet without its integrity tag (what a server signs; see retryIntegrityTag). */
export function retryWithoutTag(dcid: Buffer, scid: Buffer, token: Buffer, unusedBits = 0): Buffer {
  return Buffer.concat([
    Buffer.of(0xf0 | (unusedBits & 0x0f)),
    Buffer.from([0, 0, 0, 1]),
    Buffer.of(dcid.length),
    dcid,
    Buffer.of(scid.length),
    scid,
    token,
  ]);
}
