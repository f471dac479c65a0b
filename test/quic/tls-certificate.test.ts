/**
 * The self-signed certificate that carries a Solana identity: Node's X509Certificate (OpenSSL)
 * must parse it and verify its signature, and the identity must come back out of it; any
 * other certificate, or bytes that are not one, give no identity.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { ed25519KeyOfCertificate, selfSignedCertificate } from '../../src/quic/tls';
import { decodeCertificate } from '../../src/quic/tls/messages';
import { ed25519Identity } from '../helpers/tls-identity';
import { RFC8448 } from './rfc8448-trace';

describe('self-signed identity certificate', () => {
  it('is a valid X.509 v3 certificate, signed by the identity, whose key is the identity', () => {
    const identity = ed25519Identity();
    const der = selfSignedCertificate(identity);
    const certificate = new X509Certificate(der);
    assert.ok(certificate.verify(certificate.publicKey), 'its signature verifies with its own key');
    assert.ok(certificate.checkPrivateKey(identity.privateKey));
    assert.equal(certificate.publicKey.asymmetricKeyType, 'ed25519');
    assert.equal(certificate.subject, 'CN=Solana node');
    assert.equal(certificate.issuer, 'CN=Solana node');
    assert.equal(certificate.subjectAltName, 'DNS:localhost');
    assert.ok(new Date(certificate.validFrom) < new Date() && new Date(certificate.validTo) > new Date('3000-01-01'));
    assert.deepEqual(ed25519KeyOfCertificate(der), identity.publicKey);
    assert.deepEqual(certificate.raw, der, 'DER: parsing and writing again gives the same bytes');
  });

  it('is the same bytes for the same identity, other bytes for another', () => {
    const identity = ed25519Identity();
    assert.deepEqual(selfSignedCertificate(identity), selfSignedCertificate(identity));
    assert.notDeepEqual(selfSignedCertificate(identity), selfSignedCertificate(ed25519Identity()));
  });

  it('refuses an identity whose public key is not its private key', () => {
    const identity = ed25519Identity();
    assert.throws(() => selfSignedCertificate({ privateKey: identity.privateKey, publicKey: ed25519Identity().publicKey }));
  });

  it('gives no identity for an RSA certificate, a truncated one, or bytes that are not one', () => {
    const rsa = decodeCertificate(RFC8448.serverFlight.subarray(40 + 4, 40 + 4 + 0x1b9)).certificates[0]!; // after EncryptedExtensions, 40 bytes
    assert.equal(new X509Certificate(rsa).publicKey.asymmetricKeyType, 'rsa');
    assert.equal(ed25519KeyOfCertificate(rsa), null);
    const der = selfSignedCertificate(ed25519Identity());
    for (const bytes of [der.subarray(0, der.length - 1), der.subarray(0, 20), Buffer.alloc(0), Buffer.from('not a certificate')]) {
      assert.equal(ed25519KeyOfCertificate(bytes), null);
    }
  });
});
