/**
 * The server side of TLS 1.3 inside QUIC (RFC 8446 §4, RFC 9001 §4), as a Solana TPU server
 * runs it: X25519 and TLS_AES_128_GCM_SHA256 only, one of the accepted ALPN protocols, its
 * own identity in a self-signed ed25519 certificate, and a request for the client's: the
 * client's ed25519 key, proven by its CertificateVerify, is its Solana identity (for stake).
 * The server always asks for a certificate; requireClientCertificate says whether a client
 * may answer with none. No HelloRetryRequest (a client without an X25519 key share is
 * refused), no PSK, no tickets.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { HASH_LENGTH } from '../hkdf';
import { ALERT, TlsAlert } from './alert';
import { certificateOf, ed25519KeyOfCertificate, ed25519PublicKey } from './certificate';
import { checkCertificateVerify, SIGNATURE_SCHEME, signCertificateVerify } from './certificate-verify';
import {
  decodeAlpn,
  decodeClientKeyShare,
  decodeClientSupportedVersions,
  decodeCodeList,
  encodeAlpn,
  encodeCodeList,
  encodeServerKeyShare,
  encodeServerSupportedVersion,
  EXTENSION,
  GROUP_X25519,
  TLS13,
  type Extension,
} from './extensions';
import { HandshakeMachine, OutputCollector, unexpectedMessage, type EncryptionLevel } from './handshake-machine';
import {
  applicationTrafficSecrets,
  checkFinished,
  finishedVerifyData,
  handshakeSecret,
  handshakeTrafficSecrets,
  masterSecret,
  x25519KeyPair,
  x25519SharedSecret,
  type TrafficSecrets,
} from './key-schedule';
import type { HandshakeMessage } from './message-buffer';
import {
  decodeCertificate,
  decodeCertificateVerify,
  decodeClientHello,
  decodeFinished,
  encodeCertificate,
  encodeCertificateRequest,
  encodeCertificateVerify,
  encodeEncryptedExtensions,
  encodeFinished,
  encodeServerHello,
  HANDSHAKE,
  TLS_AES_128_GCM_SHA256,
} from './messages';
import { Transcript } from './transcript';

export type { EncryptionLevel, TlsCompletion, TlsOutput, TlsSecrets } from './handshake-machine';

/** The one client signature taken: a Solana identity is an ed25519 key. */
const CLIENT_SIGNATURE_SCHEMES = [SIGNATURE_SCHEME.ed25519];

type State = 'wait ClientHello' | 'wait Certificate' | 'wait CertificateVerify' | 'wait Finished' | 'connected';

export interface TlsServerOptions {
  /** The server's identity, presented in its certificate. */
  readonly identity: { readonly publicKey: Buffer; readonly privateKey: KeyObject };
  /** The application protocols accepted, in the server's order of preference. */
  readonly alpn: readonly string[];
  /** This endpoint's quic_transport_parameters, encoded by the QUIC layer. */
  readonly transportParameters: Buffer;
  /** Refuse a client that sends no certificate (certificate_required), rather than accept it without identity. */
  readonly requireClientCertificate: boolean;
  /** Refuse a ClientHello without quic_transport_parameters (RFC 9001 §8.2); default true. */
  readonly requireTransportParameters?: boolean;
  /** The hello's random and the X25519 key share's private key (default: node:crypto's); the QUIC fuzz makes them reproducible. */
  readonly random?: (length: number) => Buffer;
}

export class TlsServerHandshake extends HandshakeMachine {
  private state: State = 'wait ClientHello';
  private readonly certificate: Buffer;
  private readonly transcript = new Transcript();
  private handshakeTraffic?: TrafficSecrets;
  private alpn = '';
  private peerTransportParameters: Buffer = Buffer.alloc(0);
  private peerIdentity?: Buffer;

  constructor(private readonly options: TlsServerOptions) {
    super();
    if (options.alpn.length === 0) throw new RangeError('at least one ALPN protocol must be accepted');
    this.certificate = certificateOf(options.identity);
  }

  protected expectedLevel(): EncryptionLevel | null {
    if (this.state === 'wait ClientHello') return 'initial';
    if (this.state === 'connected') return null;
    return 'handshake';
  }

  protected handle(message: HandshakeMessage, output: OutputCollector): void {
    switch (this.state) {
      case 'wait ClientHello':
        if (message.type !== HANDSHAKE.clientHello) break;
        return this.onClientHello(message, output);
      case 'wait Certificate':
        if (message.type !== HANDSHAKE.certificate) break;
        return this.onCertificate(message);
      case 'wait CertificateVerify':
        if (message.type !== HANDSHAKE.certificateVerify) break;
        return this.onCertificateVerify(message);
      case 'wait Finished':
        if (message.type !== HANDSHAKE.finished) break;
        return this.onFinished(message, output);
      case 'connected':
        break;
    }
    throw unexpectedMessage(message.type, this.state);
  }

  private onClientHello(message: HandshakeMessage, output: OutputCollector): void {
    const hello = decodeClientHello(message.body);
    const { extensions } = hello;
    const versions = extensions.get(EXTENSION.supportedVersions);
    if (!versions || !decodeClientSupportedVersions(versions).includes(TLS13)) {
      throw new TlsAlert(ALERT.protocolVersion, 'the client does not offer TLS 1.3');
    }
    if (hello.compressionMethods.length !== 1 || hello.compressionMethods[0] !== 0) {
      throw new TlsAlert(ALERT.illegalParameter, 'legacy_compression_methods other than null alone'); // RFC 8446 §4.1.2
    }
    if (!hello.cipherSuites.includes(TLS_AES_128_GCM_SHA256)) throw new TlsAlert(ALERT.handshakeFailure, 'no TLS_AES_128_GCM_SHA256');
    const transportParameters = extensions.get(EXTENSION.quicTransportParameters);
    // RFC 9001 §8.4: a QUIC client never uses TLS's middlebox compatibility mode. A client over
    // TCP (tests against OpenSSL) sends no transport parameters and gets its session ID echoed.
    if (transportParameters && hello.sessionId.length !== 0)
      throw new TlsAlert(ALERT.illegalParameter, 'a QUIC ClientHello with a session ID');

    const algorithms = extensions.get(EXTENSION.signatureAlgorithms);
    if (!algorithms) throw new TlsAlert(ALERT.missingExtension, 'ClientHello without signature_algorithms');
    if (!decodeCodeList(algorithms, 'signature_algorithms').includes(SIGNATURE_SCHEME.ed25519)) {
      throw new TlsAlert(ALERT.handshakeFailure, 'the client takes no ed25519 signature, the only kind this server makes');
    }
    const groupsData = extensions.get(EXTENSION.supportedGroups);
    const keyShareData = extensions.get(EXTENSION.keyShare);
    if (!groupsData || !keyShareData) throw new TlsAlert(ALERT.missingExtension, 'ClientHello without supported_groups and key_share');
    const groups = decodeCodeList(groupsData, 'supported_groups');
    const shares = decodeClientKeyShare(keyShareData);
    const seen = new Set<number>();
    for (const { group } of shares) {
      // RFC 8446 §4.2.8: one share per group, each for a group in supported_groups.
      if (seen.has(group) || !groups.includes(group))
        throw new TlsAlert(ALERT.illegalParameter, `key share for group ${group} repeated or not offered`);
      seen.add(group);
    }
    const share = shares.find(({ group }) => group === GROUP_X25519);
    if (!share) {
      const why = groups.includes(GROUP_X25519) ? 'no X25519 key share (a HelloRetryRequest is not supported)' : 'X25519 not offered';
      throw new TlsAlert(ALERT.handshakeFailure, why);
    }
    const alpnData = extensions.get(EXTENSION.alpn);
    const offeredProtocols = alpnData ? decodeAlpn(alpnData) : [];
    const alpn = this.options.alpn.find((protocol) => offeredProtocols.includes(protocol));
    // RFC 9001 §8.1: no QUIC connection without an application protocol.
    if (alpn === undefined)
      throw new TlsAlert(ALERT.noApplicationProtocol, `no accepted application protocol in ${offeredProtocols.join(', ') || 'none'}`);
    if (!transportParameters && (this.options.requireTransportParameters ?? true)) {
      throw new TlsAlert(ALERT.missingExtension, 'no quic_transport_parameters');
    }
    const keyPair = x25519KeyPair(this.options.random?.(32));
    const secret = handshakeSecret(x25519SharedSecret(keyPair.privateKey, share.key));
    this.alpn = alpn;
    this.peerTransportParameters = transportParameters ?? Buffer.alloc(0);
    this.transcript.add(message.raw);

    const serverHello = encodeServerHello({
      random: (this.options.random ?? randomBytes)(32),
      sessionId: hello.sessionId,
      cipherSuite: TLS_AES_128_GCM_SHA256,
      extensions: [
        { type: EXTENSION.supportedVersions, data: encodeServerSupportedVersion(TLS13) },
        { type: EXTENSION.keyShare, data: encodeServerKeyShare({ group: GROUP_X25519, key: keyPair.publicKey }) },
      ],
    });
    this.transcript.add(serverHello);
    output.write('initial', serverHello);
    this.handshakeTraffic = handshakeTrafficSecrets(secret, this.transcript.current());
    output.secrets.push({ level: 'handshake', ...this.handshakeTraffic });

    // Answers only to what the client offered (RFC 8446 §4.2): no transport parameters to a client that sent none.
    const answers: Extension[] = [{ type: EXTENSION.alpn, data: encodeAlpn([alpn]) }];
    if (transportParameters) answers.push({ type: EXTENSION.quicTransportParameters, data: this.options.transportParameters });
    const flight = [
      encodeEncryptedExtensions(answers),
      encodeCertificateRequest({
        context: Buffer.alloc(0),
        extensions: [{ type: EXTENSION.signatureAlgorithms, data: encodeCodeList(CLIENT_SIGNATURE_SCHEMES) }],
      }),
      encodeCertificate({ context: Buffer.alloc(0), certificates: [this.certificate] }),
    ];
    for (const part of flight) this.transcript.add(part);
    const signature = signCertificateVerify(this.options.identity.privateKey, 'server', this.transcript.current());
    const verify = encodeCertificateVerify({ scheme: SIGNATURE_SCHEME.ed25519, signature });
    this.transcript.add(verify);
    const finished = encodeFinished(finishedVerifyData(this.handshakeTraffic.server, this.transcript.current()));
    this.transcript.add(finished);
    output.write('handshake', ...flight, verify, finished);
    // The server may send 1-RTT data now (RFC 9001 §4.1.2), but must not read any before the client's Finished.
    output.secrets.push({ level: 'application', ...applicationTrafficSecrets(masterSecret(secret), this.transcript.current()) });
    this.state = 'wait Certificate';
  }

  private onCertificate(message: HandshakeMessage): void {
    const certificate = decodeCertificate(message.body);
    if (certificate.context.length !== 0)
      throw new TlsAlert(ALERT.illegalParameter, "a context in the client's Certificate, none was asked");
    this.transcript.add(message.raw);
    const first = certificate.certificates[0];
    if (!first) {
      if (this.options.requireClientCertificate) throw new TlsAlert(ALERT.certificateRequired, 'the client sent no certificate');
      this.state = 'wait Finished';
      return;
    }
    const key = ed25519KeyOfCertificate(first);
    if (!key) throw new TlsAlert(ALERT.badCertificate, "the client's certificate does not hold an ed25519 key");
    this.peerIdentity = key;
    this.state = 'wait CertificateVerify';
  }

  private onCertificateVerify(message: HandshakeMessage): void {
    const verify = decodeCertificateVerify(message.body);
    const key = ed25519PublicKey(this.peerIdentity!);
    checkCertificateVerify(key, verify.scheme, verify.signature, 'client', this.transcript.current(), CLIENT_SIGNATURE_SCHEMES);
    this.transcript.add(message.raw);
    this.state = 'wait Finished';
  }

  private onFinished(message: HandshakeMessage, output: OutputCollector): void {
    checkFinished(decodeFinished(message.body, HASH_LENGTH), this.handshakeTraffic!.client, this.transcript.current(), "the client's");
    this.transcript.add(message.raw);
    output.complete = {
      alpn: this.alpn,
      peerTransportParameters: this.peerTransportParameters,
      ...(this.peerIdentity ? { peerIdentity: this.peerIdentity } : {}),
    };
    this.state = 'connected';
  }
}
