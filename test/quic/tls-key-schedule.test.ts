/**
 * The key schedule against RFC 8448 §3's "Simple 1-RTT Handshake", value by value: it uses
 * X25519 and TLS_AES_128_GCM_SHA256, so every secret this handshake derives has a printed
 * value to match. The trace's messages also go through our decoders, and its server's
 * RSA-PSS CertificateVerify through our check.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deriveSecret, sha256 } from '../../src/quic/hkdf';
import { ALERT, TlsAlert } from '../../src/quic/tls/alert';
import { publicKeyOfCertificate } from '../../src/quic/tls/certificate';
import { checkCertificateVerify, SIGNATURE_SCHEME } from '../../src/quic/tls/certificate-verify';
import { decodeServerKeyShare, EXTENSION } from '../../src/quic/tls/extensions';
import {
  applicationTrafficSecrets,
  checkFinished,
  earlySecret,
  finishedVerifyData,
  handshakeSecret,
  handshakeTrafficSecrets,
  masterSecret,
  x25519KeyPair,
  x25519SharedSecret,
} from '../../src/quic/tls/key-schedule';
import { HandshakeMessageBuffer, type HandshakeMessage } from '../../src/quic/tls/message-buffer';
import {
  decodeCertificate,
  decodeCertificateVerify,
  decodeClientHello,
  decodeEncryptedExtensions,
  decodeServerHello,
  HANDSHAKE,
} from '../../src/quic/tls/messages';
import { Transcript } from '../../src/quic/tls/transcript';
import { openRecord, recordKeys } from '../helpers/tls-records';
import { RFC8448 } from './rfc8448-trace';

function messagesOf(bytes: Buffer): HandshakeMessage[] {
  const buffer = new HandshakeMessageBuffer();
  buffer.push(bytes);
  const messages: HandshakeMessage[] = [];
  for (let message = buffer.next(); message; message = buffer.next()) messages.push(message);
  assert.equal(buffer.buffered, 0);
  return messages;
}

describe('TLS 1.3 key schedule, RFC 8448 §3', () => {
  const [encryptedExtensions, certificate, certificateVerify, finished] = messagesOf(RFC8448.serverFlight);

  it('X25519 gives the shared secret from the client key and the ServerHello key share', () => {
    const client = x25519KeyPair(RFC8448.clientPrivateKey);
    assert.deepEqual(client.publicKey, RFC8448.clientPublicKey);
    const hello = decodeServerHello(RFC8448.serverHello.subarray(4));
    const share = decodeServerKeyShare(hello.extensions.get(EXTENSION.keyShare)!);
    assert.deepEqual(share.key, RFC8448.serverPublicKey);
    assert.deepEqual(x25519SharedSecret(client.privateKey, share.key), RFC8448.sharedSecret);
  });

  it('derives the early, handshake and master secrets and the traffic secrets', () => {
    assert.deepEqual(earlySecret(), RFC8448.earlySecret);
    const handshake = handshakeSecret(RFC8448.sharedSecret);
    assert.deepEqual(handshake, RFC8448.handshakeSecret);
    const helloHash = sha256(RFC8448.clientHello, RFC8448.serverHello);
    assert.deepEqual(helloHash, RFC8448.helloHash);
    const traffic = handshakeTrafficSecrets(handshake, helloHash);
    assert.deepEqual(traffic.client, RFC8448.clientHandshakeTrafficSecret);
    assert.deepEqual(traffic.server, RFC8448.serverHandshakeTrafficSecret);
    const master = masterSecret(handshake);
    assert.deepEqual(master, RFC8448.masterSecret);
    const application = applicationTrafficSecrets(master, sha256(RFC8448.clientHello, RFC8448.serverHello, RFC8448.serverFlight));
    assert.deepEqual(application.client, RFC8448.clientApplicationTrafficSecret);
    assert.deepEqual(application.server, RFC8448.serverApplicationTrafficSecret);
  });

  it('computes both Finished messages and refuses a wrong one with decrypt_error', () => {
    const transcript = new Transcript();
    for (const message of [RFC8448.clientHello, RFC8448.serverHello, encryptedExtensions!.raw, certificate!.raw, certificateVerify!.raw]) {
      transcript.add(message);
    }
    assert.equal(finished!.type, HANDSHAKE.finished);
    assert.deepEqual(finished!.body, RFC8448.serverFinishedVerifyData);
    assert.deepEqual(finishedVerifyData(RFC8448.serverHandshakeTrafficSecret, transcript.current()), RFC8448.serverFinishedVerifyData);
    checkFinished(finished!.body, RFC8448.serverHandshakeTrafficSecret, transcript.current(), 'server');
    transcript.add(finished!.raw);
    assert.deepEqual(finishedVerifyData(RFC8448.clientHandshakeTrafficSecret, transcript.current()), RFC8448.clientFinishedVerifyData);
    const wrong = Buffer.from(finished!.body);
    wrong[31]! ^= 1;
    assert.throws(
      () => checkFinished(wrong, RFC8448.serverHandshakeTrafficSecret, sha256(RFC8448.clientHello), 'server'),
      (error) => error instanceof TlsAlert && error.alert === ALERT.decryptError,
    );
  });

  it('derives the record key and IV that open the server flight as the RFC printed it protected', () => {
    const keys = recordKeys(RFC8448.serverHandshakeTrafficSecret);
    assert.deepEqual(keys.key, RFC8448.serverHandshakeKey);
    assert.deepEqual(keys.iv, RFC8448.serverHandshakeIv);
    const { contentType, content } = openRecord(keys, 0, RFC8448.serverFlightRecord);
    assert.equal(contentType, 22);
    assert.deepEqual(content, RFC8448.serverFlight);
  });

  it('decodes the trace messages and checks the server RSA-PSS CertificateVerify against its certificate', () => {
    const hello = decodeClientHello(RFC8448.clientHello.subarray(4));
    assert.deepEqual(hello.cipherSuites, [0x1301, 0x1303, 0x1302]);
    assert.equal(hello.extensions.size, 9);
    assert.deepEqual(
      [...decodeEncryptedExtensions(encryptedExtensions!.body).keys()],
      [EXTENSION.supportedGroups, 28, EXTENSION.serverName],
    );
    const { certificates } = decodeCertificate(certificate!.body);
    assert.equal(certificates.length, 1);
    const key = publicKeyOfCertificate(certificates[0]!);
    assert.equal(key.asymmetricKeyType, 'rsa');
    const verify = decodeCertificateVerify(certificateVerify!.body);
    assert.equal(verify.scheme, SIGNATURE_SCHEME.rsaPssRsaeSha256);
    const hash = sha256(RFC8448.clientHello, RFC8448.serverHello, encryptedExtensions!.raw, certificate!.raw);
    const offered = [SIGNATURE_SCHEME.rsaPssRsaeSha256];
    checkCertificateVerify(key, verify.scheme, verify.signature, 'server', hash, offered);
    const isAlert = (alert: number) => (error: unknown) => error instanceof TlsAlert && error.alert === alert;
    assert.throws(() => checkCertificateVerify(key, verify.scheme, verify.signature, 'client', hash, offered), isAlert(ALERT.decryptError));
    assert.throws(
      () => checkCertificateVerify(key, SIGNATURE_SCHEME.ed25519, verify.signature, 'server', hash, [SIGNATURE_SCHEME.ed25519]),
      isAlert(ALERT.illegalParameter),
    );
    assert.throws(
      () => checkCertificateVerify(key, verify.scheme, verify.signature, 'server', hash, [SIGNATURE_SCHEME.ed25519]),
      isAlert(ALERT.illegalParameter),
    );
  });

  it('derives "derived" from the early secret as the RFC prints it', () => {
    assert.deepEqual(
      deriveSecret(RFC8448.earlySecret, 'derived', sha256()).toString('hex'),
      '6f2615a108c702c5678f54fc9dbab69716c076189c48250cebeac3576c3611ba',
    );
  });
});
