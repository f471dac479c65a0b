/**
 * The TLS 1.3 extensions a QUIC handshake for Solana's TPU uses (RFC 8446 §4.2, RFC 9001
 * §8.2), each encoded and decoded on its own. Extensions arrive as an opaque block; the
 * handshakes look up the ones they need and decode them here, so every length a peer sends is
 * checked in one place.
 */
import { ALERT, TlsAlert } from './alert';
import { TlsReader, u16, u16Vector, u8, vector } from './wire';

export const EXTENSION = {
  serverName: 0,
  supportedGroups: 10,
  signatureAlgorithms: 13,
  alpn: 16,
  preSharedKey: 41,
  earlyData: 42,
  supportedVersions: 43,
  cookie: 44,
  keyShare: 51,
  /** RFC 9001 §8.2: QUIC's transport parameters, opaque to TLS. */
  quicTransportParameters: 0x39,
} as const;

/** RFC 8446 §4.2.1. */
export const TLS13 = 0x0304;
/** RFC 8446 §4.2.7; the one group Solana's TPU servers use. */
export const GROUP_X25519 = 0x001d;

export interface Extension {
  readonly type: number;
  readonly data: Buffer;
}

/** The extensions' block, by type. A type twice in one block is refused (RFC 8446 §4.2). */
export type Extensions = ReadonlyMap<number, Buffer>;

export function encodeExtensions(extensions: readonly Extension[]): Buffer {
  return vector(2, ...extensions.map(({ type, data }) => Buffer.concat([u16(type), vector(2, data)])));
}

export function decodeExtensions(reader: TlsReader, what: string): Extensions {
  const block = reader.sub(2, `${what} extensions`);
  const extensions = new Map<number, Buffer>();
  while (block.remaining > 0) {
    const type = block.u16();
    const data = block.vector(2);
    if (extensions.has(type)) throw new TlsAlert(ALERT.illegalParameter, `${what}: extension ${type} twice`);
    extensions.set(type, data);
  }
  return extensions;
}

/**
 * Refuses an extension the peer sent in answer that it may not: one we never offered is
 * unsupported_extension, one we offered but that does not belong in this message is
 * illegal_parameter (RFC 8446 §4.2).
 */
export function checkAnswerExtensions(
  extensions: Extensions,
  allowed: ReadonlySet<number>,
  offered: ReadonlySet<number>,
  what: string,
): void {
  for (const type of extensions.keys()) {
    if (allowed.has(type) && offered.has(type)) continue;
    if (offered.has(type)) throw new TlsAlert(ALERT.illegalParameter, `${what} may not carry extension ${type}`);
    throw new TlsAlert(ALERT.unsupportedExtension, `${what} carries extension ${type}, never offered`);
  }
}

/** Decodes an extension's data completely, with its own reader. */
function decodeWhole<T>(data: Buffer, what: string, read: (reader: TlsReader) => T): T {
  const reader = new TlsReader(data, what);
  const value = read(reader);
  reader.end();
  return value;
}

// supported_versions (RFC 8446 §4.2.1): a list in the ClientHello, one version in the ServerHello.

export function encodeClientSupportedVersions(versions: readonly number[]): Buffer {
  return u16Vector(1, versions);
}

export function decodeClientSupportedVersions(data: Buffer): number[] {
  return decodeWhole(data, 'supported_versions', (reader) => reader.u16List(1));
}

export function encodeServerSupportedVersion(version: number): Buffer {
  return u16(version);
}

export function decodeServerSupportedVersion(data: Buffer): number {
  return decodeWhole(data, 'supported_versions', (reader) => reader.u16());
}

// key_share (RFC 8446 §4.2.8): entries in the ClientHello, one entry in the ServerHello,
// the group alone in a HelloRetryRequest.

export interface KeyShareEntry {
  readonly group: number;
  readonly key: Buffer;
}

function encodeKeyShareEntry({ group, key }: KeyShareEntry): Buffer {
  return Buffer.concat([u16(group), vector(2, key)]);
}

function readKeyShareEntry(reader: TlsReader): KeyShareEntry {
  return { group: reader.u16(), key: reader.vector(2, 1) };
}

export function encodeClientKeyShare(entries: readonly KeyShareEntry[]): Buffer {
  return vector(2, ...entries.map(encodeKeyShareEntry));
}

export function decodeClientKeyShare(data: Buffer): KeyShareEntry[] {
  return decodeWhole(data, 'key_share', (reader) => {
    const list = reader.sub(2, 'key_share entries');
    const entries: KeyShareEntry[] = [];
    while (list.remaining > 0) entries.push(readKeyShareEntry(list));
    return entries;
  });
}

export function encodeServerKeyShare(entry: KeyShareEntry): Buffer {
  return encodeKeyShareEntry(entry);
}

export function decodeServerKeyShare(data: Buffer): KeyShareEntry {
  return decodeWhole(data, 'key_share', readKeyShareEntry);
}

export function decodeRetryKeyShare(data: Buffer): number {
  return decodeWhole(data, 'key_share', (reader) => reader.u16());
}

// signature_algorithms (§4.2.3) and supported_groups (§4.2.7): non-empty lists of 16-bit codes.

export function encodeCodeList(codes: readonly number[]): Buffer {
  return u16Vector(2, codes);
}

export function decodeCodeList(data: Buffer, what: string): number[] {
  return decodeWhole(data, what, (reader) => reader.u16List(2));
}

// application_layer_protocol_negotiation (RFC 7301 §3.1): a non-empty list of non-empty names.

export function encodeAlpn(protocols: readonly string[]): Buffer {
  return vector(2, ...protocols.map((protocol) => vector(1, Buffer.from(protocol, 'latin1'))));
}

export function decodeAlpn(data: Buffer): string[] {
  return decodeWhole(data, 'application_layer_protocol_negotiation', (reader) => {
    const list = reader.sub(2, 'protocol names', 2);
    const protocols: string[] = [];
    while (list.remaining > 0) protocols.push(list.vector(1, 1).toString('latin1'));
    return protocols;
  });
}

// server_name (RFC 6066 §3): one host name; the server's answer, if any, is empty.

export function encodeServerName(host: string): Buffer {
  return vector(2, u8(0), vector(2, Buffer.from(host, 'ascii')));
}
