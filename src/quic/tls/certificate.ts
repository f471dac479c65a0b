/**
 * The self-signed X.509 certificate that carries a Solana identity through TLS: Agave and
 * Firedancer read the client's ed25519 identity key from its SubjectPublicKeyInfo to look up
 * its stake, and do not check the certificate's own signature (TLS's CertificateVerify proves
 * the key). The DER is built by hand, minimal but valid: Node's X509Certificate parses it and
 * its signature verifies, so OpenSSL peers take it too.
 */
import { createPublicKey, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { sha256 } from '../hkdf';
import { ALERT, TlsAlert } from './alert';

/** An ed25519 identity: the 32 raw public-key bytes and the private key. */
export interface TlsIdentity {
  readonly publicKey: Buffer;
  readonly privateKey: KeyObject;
}

const ED25519_KEY_LENGTH = 32;
/** SubjectPublicKeyInfo of an Ed25519 key, before its 32 bytes (RFC 8410 §4). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** id-Ed25519, 1.3.101.112 (RFC 8410 §3). */
const OID_ED25519 = Buffer.from('2b6570', 'hex');
/** id-at-commonName, 2.5.4.3. */
const OID_COMMON_NAME = Buffer.from('550403', 'hex');
/** id-ce-subjectAltName, 2.5.29.17. */
const OID_SUBJECT_ALT_NAME = Buffer.from('551d11', 'hex');
const COMMON_NAME = 'Solana node';
const ALT_NAME = 'localhost';
/** The validity Agave's certificates carry (rcgen's defaults): 1975 to 4096, never a reason to refuse. */
const NOT_BEFORE = '750101000000Z';
const NOT_AFTER = '40960101000000Z';

/** A DER element: tag, definite length, content. */
function der(tag: number, ...content: Uint8Array[]): Buffer {
  const body = Buffer.concat(content);
  let length: Buffer;
  if (body.length < 0x80) length = Buffer.of(body.length);
  else if (body.length < 0x100) length = Buffer.of(0x81, body.length);
  else length = Buffer.of(0x82, body.length >> 8, body.length & 0xff);
  return Buffer.concat([Buffer.of(tag), length, body]);
}

const sequence = (...content: Uint8Array[]) => der(0x30, ...content);
const oid = (value: Buffer) => der(0x06, value);
const ed25519Algorithm = () => sequence(oid(OID_ED25519)); // parameters absent (RFC 8410 §3)
const bitString = (bytes: Uint8Array) => der(0x03, Buffer.of(0), bytes); // no unused bits

/**
 * A self-signed X.509 v3 certificate for an ed25519 identity, in DER. The same identity gives
 * the same bytes (ed25519 signatures are deterministic, the serial comes from the key).
 */
export function selfSignedCertificate(identity: TlsIdentity): Buffer {
  if (!rawEd25519Key(identity.privateKey)?.equals(identity.publicKey)) {
    throw new Error('the identity is not an ed25519 key pair whose public key is the given 32 bytes');
  }
  const serial = sha256(identity.publicKey).subarray(0, 8);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, and minimal in DER
  const name = sequence(der(0x31, sequence(oid(OID_COMMON_NAME), der(0x0c, Buffer.from(COMMON_NAME, 'utf8')))));
  const subjectAltName = sequence(oid(OID_SUBJECT_ALT_NAME), der(0x04, sequence(der(0x82, Buffer.from(ALT_NAME, 'ascii')))));
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.of(2))), // version v3
    der(0x02, serial),
    ed25519Algorithm(),
    name,
    sequence(der(0x17, Buffer.from(NOT_BEFORE, 'ascii')), der(0x18, Buffer.from(NOT_AFTER, 'ascii'))),
    name,
    sequence(ed25519Algorithm(), bitString(identity.publicKey)),
    der(0xa3, sequence(subjectAltName)),
  );
  return sequence(tbs, ed25519Algorithm(), bitString(sign(null, tbs, identity.privateKey)));
}

const certificates = new WeakMap<KeyObject, Buffer>();

/** selfSignedCertificate, made once per private key: a handshake per connection should not sign each time. */
export function certificateOf(identity: TlsIdentity): Buffer {
  let certificate = certificates.get(identity.privateKey);
  if (!certificate) {
    certificate = selfSignedCertificate(identity);
    certificates.set(identity.privateKey, certificate);
  }
  return certificate;
}

/** The 32 raw bytes of the certificate's ed25519 key, or null if it does not parse or its key is another kind. */
export function ed25519KeyOfCertificate(certificate: Buffer): Buffer | null {
  try {
    return rawEd25519Key(new X509Certificate(certificate).publicKey);
  } catch {
    return null;
  }
}

/** The certificate's public key, whatever its kind; bad_certificate if it does not parse. */
export function publicKeyOfCertificate(certificate: Buffer): KeyObject {
  try {
    return new X509Certificate(certificate).publicKey;
  } catch (error) {
    throw new TlsAlert(ALERT.badCertificate, 'the certificate does not parse', { cause: error });
  }
}

/** The raw 32 bytes of an ed25519 key (public, or the public half of a private one); null for any other kind. */
export function rawEd25519Key(key: KeyObject): Buffer | null {
  if (key.asymmetricKeyType !== 'ed25519') return null;
  const spki = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'der', type: 'spki' });
  return spki.subarray(spki.length - ED25519_KEY_LENGTH);
}

/** An ed25519 public KeyObject from its raw 32 bytes. */
export function ed25519PublicKey(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}
