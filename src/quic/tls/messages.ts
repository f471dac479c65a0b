/**
 * The TLS 1.3 handshake messages a QUIC handshake carries (RFC 8446 §4), encoded and decoded
 * structurally: lengths, ranges and fixed fields are checked here, meaning (which version,
 * which group, which key) is checked by the state machines. Decoding takes a message's body,
 * as the message buffer cuts it out, and throws only TlsAlert.
 */
import { ALERT, TlsAlert } from './alert';
import { decodeExtensions, encodeExtensions, type Extension, type Extensions } from './extensions';
import { TlsReader, u16, u8, u16Vector, vector } from './wire';

/** HandshakeType (RFC 8446 §4). */
export const HANDSHAKE = {
  clientHello: 1,
  serverHello: 2,
  newSessionTicket: 4,
  endOfEarlyData: 5,
  encryptedExtensions: 8,
  certificate: 11,
  certificateRequest: 13,
  certificateVerify: 15,
  finished: 20,
  keyUpdate: 24,
  messageHash: 254,
} as const;

/** legacy_version of both hellos (RFC 8446 §4.1.2): TLS 1.2's number, the real one is in supported_versions. */
export const LEGACY_VERSION = 0x0303;
/** RFC 8446 §B.4; the only suite Solana's TPU servers take. */
export const TLS_AES_128_GCM_SHA256 = 0x1301;
/** A ServerHello with this random is a HelloRetryRequest (RFC 8446 §4.1.3): SHA-256 of "HelloRetryRequest". */
export const HELLO_RETRY_REQUEST_RANDOM = Buffer.from('cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c', 'hex');
const RANDOM_LENGTH = 32;
const MAX_SESSION_ID = 32;

/** A handshake message: type, then the body after its 3-byte length. */
export function encodeHandshake(type: number, body: Uint8Array): Buffer {
  return Buffer.concat([u8(type), vector(3, body)]);
}

export interface ClientHello {
  readonly random: Buffer;
  readonly sessionId: Buffer;
  readonly cipherSuites: readonly number[];
  readonly compressionMethods: Buffer;
  readonly extensions: Extensions;
}

export function encodeClientHello(hello: {
  random: Buffer;
  sessionId: Buffer;
  cipherSuites: readonly number[];
  extensions: readonly Extension[];
}): Buffer {
  return encodeHandshake(
    HANDSHAKE.clientHello,
    Buffer.concat([
      u16(LEGACY_VERSION),
      hello.random,
      vector(1, hello.sessionId),
      u16Vector(2, hello.cipherSuites),
      vector(1, u8(0)), // legacy_compression_methods: null only
      encodeExtensions(hello.extensions),
    ]),
  );
}

export function decodeClientHello(body: Buffer): ClientHello {
  const reader = new TlsReader(body, 'ClientHello');
  reader.u16(); // legacy_version: ignored, supported_versions says (RFC 8446 §4.2.1)
  const random = reader.take(RANDOM_LENGTH);
  const sessionId = reader.vector(1, 0, MAX_SESSION_ID);
  const cipherSuites = reader.u16List(2);
  const compressionMethods = reader.vector(1, 1);
  // A hello without extensions is TLS 1.2 or older; it then lacks supported_versions.
  const extensions = reader.remaining === 0 ? new Map<number, Buffer>() : decodeExtensions(reader, 'ClientHello');
  reader.end();
  return { random, sessionId, cipherSuites, compressionMethods, extensions };
}

export interface ServerHello {
  readonly legacyVersion: number;
  readonly random: Buffer;
  readonly sessionId: Buffer;
  readonly cipherSuite: number;
  readonly compressionMethod: number;
  readonly extensions: Extensions;
  /** A HelloRetryRequest, told apart by its random (RFC 8446 §4.1.3). */
  readonly retry: boolean;
}

export function encodeServerHello(hello: {
  random: Buffer;
  sessionId: Buffer;
  cipherSuite: number;
  extensions: readonly Extension[];
}): Buffer {
  return encodeHandshake(
    HANDSHAKE.serverHello,
    Buffer.concat([
      u16(LEGACY_VERSION),
      hello.random,
      vector(1, hello.sessionId),
      u16(hello.cipherSuite),
      u8(0),
      encodeExtensions(hello.extensions),
    ]),
  );
}

export function decodeServerHello(body: Buffer): ServerHello {
  const reader = new TlsReader(body, 'ServerHello');
  const legacyVersion = reader.u16();
  const random = reader.take(RANDOM_LENGTH);
  const sessionId = reader.vector(1, 0, MAX_SESSION_ID);
  const cipherSuite = reader.u16();
  const compressionMethod = reader.u8();
  const extensions = reader.remaining === 0 ? new Map<number, Buffer>() : decodeExtensions(reader, 'ServerHello');
  reader.end();
  return { legacyVersion, random, sessionId, cipherSuite, compressionMethod, extensions, retry: random.equals(HELLO_RETRY_REQUEST_RANDOM) };
}

export function encodeEncryptedExtensions(extensions: readonly Extension[]): Buffer {
  return encodeHandshake(HANDSHAKE.encryptedExtensions, encodeExtensions(extensions));
}

export function decodeEncryptedExtensions(body: Buffer): Extensions {
  const reader = new TlsReader(body, 'EncryptedExtensions');
  const extensions = decodeExtensions(reader, 'EncryptedExtensions');
  reader.end();
  return extensions;
}

export interface CertificateRequest {
  readonly context: Buffer;
  readonly extensions: Extensions;
}

export function encodeCertificateRequest(request: { context: Buffer; extensions: readonly Extension[] }): Buffer {
  return encodeHandshake(HANDSHAKE.certificateRequest, Buffer.concat([vector(1, request.context), encodeExtensions(request.extensions)]));
}

export function decodeCertificateRequest(body: Buffer): CertificateRequest {
  const reader = new TlsReader(body, 'CertificateRequest');
  const context = reader.vector(1);
  const extensions = decodeExtensions(reader, 'CertificateRequest');
  reader.end();
  return { context, extensions };
}

export interface Certificate {
  readonly context: Buffer;
  /** The DER certificates, the end-entity's first; each entry's extensions are checked for form and dropped. */
  readonly certificates: readonly Buffer[];
}

export function encodeCertificate(certificate: { context: Buffer; certificates: readonly Buffer[] }): Buffer {
  const entries = certificate.certificates.map((der) => Buffer.concat([vector(3, der), vector(2)]));
  return encodeHandshake(HANDSHAKE.certificate, Buffer.concat([vector(1, certificate.context), vector(3, ...entries)]));
}

export function decodeCertificate(body: Buffer): Certificate {
  const reader = new TlsReader(body, 'Certificate');
  const context = reader.vector(1);
  const list = reader.sub(3, 'certificate_list');
  reader.end();
  const certificates: Buffer[] = [];
  while (list.remaining > 0) {
    certificates.push(list.vector(3, 1));
    decodeExtensions(list, 'CertificateEntry');
  }
  return { context, certificates };
}

export interface CertificateVerify {
  readonly scheme: number;
  readonly signature: Buffer;
}

export function encodeCertificateVerify({ scheme, signature }: CertificateVerify): Buffer {
  return encodeHandshake(HANDSHAKE.certificateVerify, Buffer.concat([u16(scheme), vector(2, signature)]));
}

export function decodeCertificateVerify(body: Buffer): CertificateVerify {
  const reader = new TlsReader(body, 'CertificateVerify');
  const scheme = reader.u16();
  const signature = reader.vector(2);
  reader.end();
  return { scheme, signature };
}

export function encodeFinished(verifyData: Buffer): Buffer {
  return encodeHandshake(HANDSHAKE.finished, verifyData);
}

/** verify_data is as long as the hash (RFC 8446 §4.4.4): 32 bytes with SHA-256. */
export function decodeFinished(body: Buffer, hashLength: number): Buffer {
  if (body.length !== hashLength) throw new TlsAlert(ALERT.decodeError, `Finished of ${body.length} bytes, not ${hashLength}`);
  return body;
}
