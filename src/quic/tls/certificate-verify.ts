/**
 * CertificateVerify (RFC 8446 §4.4.3): the signature that proves each side holds the key of
 * the certificate it sent. Solana identities sign with ed25519; a client also accepts the
 * server schemes common elsewhere (ECDSA P-256, RSA-PSS), since it checks the server's
 * signature against whatever key its certificate holds, without a CA.
 */
import { constants, sign, verify, type KeyObject } from 'node:crypto';
import { ALERT, TlsAlert } from './alert';

/** SignatureScheme codes (RFC 8446 §4.2.3). */
export const SIGNATURE_SCHEME = {
  ed25519: 0x0807,
  ecdsaSecp256r1Sha256: 0x0403,
  rsaPssRsaeSha256: 0x0804,
} as const;

export type Side = 'server' | 'client';

/** The signed content: 64 spaces, the context string, a zero byte, the transcript hash. */
export function certificateVerifyContent(side: Side, transcriptHash: Uint8Array): Buffer {
  return Buffer.concat([Buffer.alloc(64, 0x20), Buffer.from(`TLS 1.3, ${side} CertificateVerify`, 'ascii'), Buffer.of(0), transcriptHash]);
}

/** An ed25519 CertificateVerify signature. */
export function signCertificateVerify(privateKey: KeyObject, side: Side, transcriptHash: Uint8Array): Buffer {
  return sign(null, certificateVerifyContent(side, transcriptHash), privateKey);
}

/**
 * Checks a peer's CertificateVerify against the key of its certificate. A scheme not offered,
 * or one that does not fit the key, is illegal_parameter; a signature that does not verify is
 * decrypt_error (RFC 8446 §4.4.3).
 */
export function checkCertificateVerify(
  publicKey: KeyObject,
  scheme: number,
  signature: Buffer,
  side: Side,
  transcriptHash: Uint8Array,
  offered: readonly number[],
): void {
  if (!offered.includes(scheme)) throw new TlsAlert(ALERT.illegalParameter, `CertificateVerify with scheme ${scheme}, not offered`);
  const content = certificateVerifyContent(side, transcriptHash);
  const keyType = publicKey.asymmetricKeyType;
  let valid: boolean;
  try {
    if (scheme === SIGNATURE_SCHEME.ed25519 && keyType === 'ed25519') {
      valid = verify(null, content, publicKey, signature);
    } else if (
      scheme === SIGNATURE_SCHEME.ecdsaSecp256r1Sha256 &&
      keyType === 'ec' &&
      publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1'
    ) {
      valid = verify('sha256', content, { key: publicKey, dsaEncoding: 'der' }, signature);
    } else if (scheme === SIGNATURE_SCHEME.rsaPssRsaeSha256 && keyType === 'rsa') {
      valid = verify('sha256', content, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature);
    } else {
      throw new TlsAlert(ALERT.illegalParameter, `CertificateVerify scheme ${scheme} does not fit a ${keyType ?? 'unknown'} key`);
    }
  } catch (error) {
    if (error instanceof TlsAlert) throw error;
    valid = false; // a signature OpenSSL cannot even parse (bad DER, wrong size)
  }
  if (!valid) throw new TlsAlert(ALERT.decryptError, `the ${side}'s CertificateVerify does not verify`);
}
