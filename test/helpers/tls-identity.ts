/** Ed25519 identities for the TLS tests, and their certificate and key as PEM for Node's TLS. */
import { generateKeyPairSync } from 'node:crypto';
import { selfSignedCertificate, type TlsIdentity } from '../../src/quic/tls';

export function ed25519Identity(): TlsIdentity {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  return { privateKey, publicKey: spki.subarray(spki.length - 32) };
}

/** key and cert for tls.createServer / tls.connect: the identity's self-signed certificate. */
export function pemOf(identity: TlsIdentity): { key: string; cert: string } {
  const base64 = selfSignedCertificate(identity).toString('base64');
  const lines = base64.match(/.{1,64}/g)!.join('\n');
  return {
    key: identity.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    cert: `-----BEGIN CERTIFICATE-----\n${lines}\n-----END CERTIFICATE-----\n`,
  };
}
