/**
 * TLS 1.3's key schedule (RFC 8446 §7.1) for SHA-256 without a PSK, and the X25519 exchange
 * that feeds it. QUIC takes the traffic secrets and derives its packet keys from them
 * (RFC 9001 §5.1); TLS's own record keys are never used here.
 */
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { deriveSecret, HASH_LENGTH, hkdfExpandLabel, hkdfExtract, sha256 } from '../hkdf';
import { ALERT, TlsAlert } from './alert';

const ZEROS = Buffer.alloc(HASH_LENGTH);
const EMPTY_HASH = sha256();
/** DER prefixes that make 32 raw bytes an X25519 SubjectPublicKeyInfo or PKCS#8 key (RFC 8410). */
const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X25519_KEY_LENGTH = 32;

export interface TrafficSecrets {
  readonly client: Buffer;
  readonly server: Buffer;
}

/** HKDF-Extract(0, 0): the early secret when no PSK is used. */
export function earlySecret(): Buffer {
  return hkdfExtract(ZEROS, ZEROS);
}

/** The handshake secret, from the (EC)DHE shared secret. */
export function handshakeSecret(sharedSecret: Uint8Array): Buffer {
  return hkdfExtract(deriveSecret(earlySecret(), 'derived', EMPTY_HASH), sharedSecret);
}

export function masterSecret(handshake: Uint8Array): Buffer {
  return hkdfExtract(deriveSecret(handshake, 'derived', EMPTY_HASH), ZEROS);
}

/** The handshake traffic secrets, over the transcript ClientHello..ServerHello. */
export function handshakeTrafficSecrets(handshake: Uint8Array, helloHash: Uint8Array): TrafficSecrets {
  return { client: deriveSecret(handshake, 'c hs traffic', helloHash), server: deriveSecret(handshake, 's hs traffic', helloHash) };
}

/** The first application traffic secrets, over the transcript ClientHello..server Finished. */
export function applicationTrafficSecrets(master: Uint8Array, serverFinishedHash: Uint8Array): TrafficSecrets {
  return {
    client: deriveSecret(master, 'c ap traffic', serverFinishedHash),
    server: deriveSecret(master, 's ap traffic', serverFinishedHash),
  };
}

/** Finished's verify_data (RFC 8446 §4.4.4): HMAC of the transcript under the sender's finished key. */
export function finishedVerifyData(trafficSecret: Uint8Array, transcriptHash: Uint8Array): Buffer {
  const finishedKey = hkdfExpandLabel(trafficSecret, 'finished', Buffer.alloc(0), HASH_LENGTH);
  return createHmac('sha256', finishedKey).update(transcriptHash).digest();
}

/** Checks a peer's Finished in constant time; decrypt_error if it is wrong (RFC 8446 §4.4.4). */
export function checkFinished(verifyData: Buffer, trafficSecret: Uint8Array, transcriptHash: Uint8Array, what: string): void {
  const expected = finishedVerifyData(trafficSecret, transcriptHash);
  if (verifyData.length !== expected.length || !timingSafeEqual(verifyData, expected)) {
    throw new TlsAlert(ALERT.decryptError, `${what} Finished does not match the transcript`);
  }
}

export interface X25519KeyPair {
  readonly privateKey: KeyObject;
  /** The 32 raw bytes sent in key_share. */
  readonly publicKey: Buffer;
}

/** A fresh ephemeral pair, or the pair of a given raw private key (for test vectors). */
export function x25519KeyPair(rawPrivateKey?: Uint8Array): X25519KeyPair {
  const privateKey = rawPrivateKey
    ? createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, rawPrivateKey]), format: 'der', type: 'pkcs8' })
    : generateKeyPairSync('x25519').privateKey;
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return { privateKey, publicKey: spki.subarray(spki.length - X25519_KEY_LENGTH) };
}

/**
 * The X25519 shared secret with a peer's raw public key. A key of the wrong size, or one that
 * gives the all-zero secret (a low-order point, RFC 8446 §7.4.2), is illegal_parameter.
 */
export function x25519SharedSecret(privateKey: KeyObject, peerPublicKey: Buffer): Buffer {
  if (peerPublicKey.length !== X25519_KEY_LENGTH) {
    throw new TlsAlert(ALERT.illegalParameter, `an X25519 key share of ${peerPublicKey.length} bytes`);
  }
  let secret: Buffer;
  try {
    const publicKey = createPublicKey({ key: Buffer.concat([X25519_SPKI_PREFIX, peerPublicKey]), format: 'der', type: 'spki' });
    secret = diffieHellman({ privateKey, publicKey });
  } catch (error) {
    // OpenSSL refuses the all-zero result itself.
    throw new TlsAlert(ALERT.illegalParameter, 'the X25519 key share gives no shared secret', { cause: error });
  }
  if (secret.equals(ZEROS)) throw new TlsAlert(ALERT.illegalParameter, 'the X25519 key share gives the all-zero secret');
  return secret;
}
