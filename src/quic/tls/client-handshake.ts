/**
 * The client side of TLS 1.3 inside QUIC (RFC 8446 §4, RFC 9001 §4), as Solana's TPU needs
 * it: X25519 and TLS_AES_128_GCM_SHA256 only, ALPN solana-tpu, the identity presented as a
 * self-signed ed25519 certificate. The server's certificate is not checked against any CA
 * (TPU servers have none), but its CertificateVerify is checked against the certificate's key
 * and its Finished against the transcript. No PSK, no 0-RTT; NewSessionTicket is ignored.
 * A HelloRetryRequest is refused: one naming another group is illegal_parameter (only X25519
 * is supported, and it was offered), one with only a cookie is handshake_failure.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { HASH_LENGTH } from '../hkdf';
import { ALERT, TlsAlert } from './alert';
import { certificateOf, publicKeyOfCertificate, rawEd25519Key } from './certificate';
import { checkCertificateVerify, SIGNATURE_SCHEME, signCertificateVerify } from './certificate-verify';
import {
  checkAnswerExtensions,
  decodeAlpn,
  decodeCodeList,
  decodeRetryKeyShare,
  decodeServerKeyShare,
  decodeServerSupportedVersion,
  encodeAlpn,
  encodeClientKeyShare,
  encodeClientSupportedVersions,
  encodeCodeList,
  encodeServerName,
  EXTENSION,
  GROUP_X25519,
  TLS13,
  type Extension,
} from './extensions';
import { HandshakeMachine, OutputCollector, unexpectedMessage, type EncryptionLevel, type TlsOutput } from './handshake-machine';
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
  decodeCertificateRequest,
  decodeCertificateVerify,
  decodeEncryptedExtensions,
  decodeFinished,
  decodeServerHello,
  encodeCertificate,
  encodeCertificateVerify,
  encodeClientHello,
  encodeFinished,
  HANDSHAKE,
  LEGACY_VERSION,
  TLS_AES_128_GCM_SHA256,
  type ServerHello,
} from './messages';
import { Transcript } from './transcript';

export type { EncryptionLevel, TlsCompletion, TlsOutput, TlsSecrets } from './handshake-machine';

/** The server signatures this client can check (RFC 8446 §4.2.3), ed25519 first. */
const SERVER_SIGNATURE_SCHEMES = [SIGNATURE_SCHEME.ed25519, SIGNATURE_SCHEME.ecdsaSecp256r1Sha256, SIGNATURE_SCHEME.rsaPssRsaeSha256];
/** What a ServerHello may carry (RFC 8446 §4.2: no PSK here). */
const SERVER_HELLO_EXTENSIONS = new Set<number>([EXTENSION.supportedVersions, EXTENSION.keyShare]);
/** What EncryptedExtensions may carry in answer to this ClientHello. */
const ENCRYPTED_EXTENSIONS = new Set<number>([
  EXTENSION.serverName,
  EXTENSION.supportedGroups,
  EXTENSION.alpn,
  EXTENSION.quicTransportParameters,
]);

type State =
  | 'start'
  | 'wait ServerHello'
  | 'wait EncryptedExtensions'
  | 'wait CertificateRequest'
  | 'wait Certificate'
  | 'wait CertificateVerify'
  | 'wait Finished'
  | 'connected';

export interface TlsClientOptions {
  /** The Solana identity presented in the client certificate. */
  readonly identity: { readonly publicKey: Buffer; readonly privateKey: KeyObject };
  /** The one application protocol offered: solana-tpu for the TPU. */
  readonly alpn: string;
  /** This endpoint's quic_transport_parameters, encoded by the QUIC layer. */
  readonly transportParameters: Buffer;
  /** server_name, if any (TPU servers ignore it). */
  readonly serverName?: string;
  /** Refuse a server whose EncryptedExtensions lack quic_transport_parameters (RFC 9001 §8.2); default true. */
  readonly requireTransportParameters?: boolean;
  /** The hello's random and the X25519 key share's private key (default: node:crypto's); the QUIC fuzz makes them reproducible. */
  readonly random?: (length: number) => Buffer;
}

export class TlsClientHandshake extends HandshakeMachine {
  private state: State = 'start';
  private readonly certificate: Buffer;
  private readonly keyPair: ReturnType<typeof x25519KeyPair>;
  private readonly transcript = new Transcript();
  private readonly offered = new Set<number>();
  private handshake?: { secret: Buffer; traffic: TrafficSecrets };
  private peerTransportParameters: Buffer = Buffer.alloc(0);
  /** The context of the server's CertificateRequest, if it sent one. */
  private certificateRequestContext?: Buffer;
  private serverKey?: KeyObject;

  constructor(private readonly options: TlsClientOptions) {
    super();
    const alpnLength = Buffer.byteLength(options.alpn, 'latin1');
    if (alpnLength < 1 || alpnLength > 255) throw new RangeError('the ALPN protocol must be 1 to 255 bytes');
    this.certificate = certificateOf(options.identity);
    this.keyPair = x25519KeyPair(options.random?.(32));
  }

  /** The ClientHello's output: send at 'initial'. */
  start(): TlsOutput {
    if (this.state !== 'start') throw new Error('the handshake has started already');
    const extensions: Extension[] = [];
    if (this.options.serverName) extensions.push({ type: EXTENSION.serverName, data: encodeServerName(this.options.serverName) });
    extensions.push(
      { type: EXTENSION.supportedGroups, data: encodeCodeList([GROUP_X25519]) },
      { type: EXTENSION.signatureAlgorithms, data: encodeCodeList(SERVER_SIGNATURE_SCHEMES) },
      { type: EXTENSION.alpn, data: encodeAlpn([this.options.alpn]) },
      { type: EXTENSION.supportedVersions, data: encodeClientSupportedVersions([TLS13]) },
      { type: EXTENSION.keyShare, data: encodeClientKeyShare([{ group: GROUP_X25519, key: this.keyPair.publicKey }]) },
      { type: EXTENSION.quicTransportParameters, data: this.options.transportParameters },
    );
    for (const { type } of extensions) this.offered.add(type);
    // legacy_session_id empty: QUIC forbids TLS's middlebox compatibility mode (RFC 9001 §8.4).
    const hello = encodeClientHello({
      random: (this.options.random ?? randomBytes)(32),
      sessionId: Buffer.alloc(0),
      cipherSuites: [TLS_AES_128_GCM_SHA256],
      extensions,
    });
    this.transcript.add(hello);
    this.state = 'wait ServerHello';
    const output = new OutputCollector();
    output.write('initial', hello);
    return output.result();
  }

  protected expectedLevel(): EncryptionLevel | null {
    if (this.state === 'start') return null;
    if (this.state === 'wait ServerHello') return 'initial';
    if (this.state === 'connected') return 'application';
    return 'handshake';
  }

  protected handle(message: HandshakeMessage, output: OutputCollector): void {
    switch (this.state) {
      case 'wait ServerHello':
        if (message.type !== HANDSHAKE.serverHello) break;
        return this.onServerHello(message, output);
      case 'wait EncryptedExtensions':
        if (message.type !== HANDSHAKE.encryptedExtensions) break;
        return this.onEncryptedExtensions(message);
      case 'wait CertificateRequest':
        if (message.type === HANDSHAKE.certificateRequest) return this.onCertificateRequest(message);
        if (message.type !== HANDSHAKE.certificate) break;
        return this.onCertificate(message);
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
        // Tickets are for resumption, which this client never does; KeyUpdate is forbidden in QUIC (RFC 9001 §6).
        if (message.type === HANDSHAKE.newSessionTicket) return;
        break;
    }
    throw unexpectedMessage(message.type, this.state);
  }

  private onServerHello(message: HandshakeMessage, output: OutputCollector): void {
    const hello = decodeServerHello(message.body);
    const version = hello.extensions.get(EXTENSION.supportedVersions);
    if (!version) throw new TlsAlert(ALERT.protocolVersion, 'the server chose TLS 1.2 or older');
    if (decodeServerSupportedVersion(version) !== TLS13)
      throw new TlsAlert(ALERT.illegalParameter, 'the server chose a version never offered');
    if (hello.retry) refuseRetry(hello);
    if (hello.legacyVersion !== LEGACY_VERSION) throw new TlsAlert(ALERT.illegalParameter, 'ServerHello legacy_version is not 0x0303');
    if (hello.sessionId.length !== 0) throw new TlsAlert(ALERT.illegalParameter, 'ServerHello echoes a session ID never sent');
    if (hello.cipherSuite !== TLS_AES_128_GCM_SHA256)
      throw new TlsAlert(ALERT.illegalParameter, `cipher suite ${hello.cipherSuite}, never offered`);
    if (hello.compressionMethod !== 0) throw new TlsAlert(ALERT.illegalParameter, 'ServerHello with compression');
    checkAnswerExtensions(hello.extensions, SERVER_HELLO_EXTENSIONS, this.offered, 'ServerHello');
    const keyShare = hello.extensions.get(EXTENSION.keyShare);
    if (!keyShare) throw new TlsAlert(ALERT.missingExtension, 'ServerHello without key_share');
    const share = decodeServerKeyShare(keyShare);
    if (share.group !== GROUP_X25519) throw new TlsAlert(ALERT.illegalParameter, `key share for group ${share.group}, never offered`);
    const secret = handshakeSecret(x25519SharedSecret(this.keyPair.privateKey, share.key));
    this.transcript.add(message.raw);
    const traffic = handshakeTrafficSecrets(secret, this.transcript.current());
    this.handshake = { secret, traffic };
    output.secrets.push({ level: 'handshake', ...traffic });
    this.state = 'wait EncryptedExtensions';
  }

  private onEncryptedExtensions(message: HandshakeMessage): void {
    const extensions = decodeEncryptedExtensions(message.body);
    checkAnswerExtensions(extensions, ENCRYPTED_EXTENSIONS, this.offered, 'EncryptedExtensions');
    const serverName = extensions.get(EXTENSION.serverName);
    if (serverName && serverName.length !== 0) throw new TlsAlert(ALERT.decodeError, 'a server_name answer that is not empty');
    const groups = extensions.get(EXTENSION.supportedGroups);
    if (groups) decodeCodeList(groups, 'supported_groups'); // the server's preference, for later connections: checked, not used
    const alpn = extensions.get(EXTENSION.alpn);
    // RFC 9001 §8.1: no QUIC connection without an application protocol.
    if (!alpn) throw new TlsAlert(ALERT.noApplicationProtocol, 'the server chose no application protocol');
    const chosen = decodeAlpn(alpn);
    if (chosen.length !== 1 || chosen[0] !== this.options.alpn) {
      throw new TlsAlert(ALERT.illegalParameter, `the server chose the application protocol(s) ${chosen.join(', ')}, not offered`);
    }
    const parameters = extensions.get(EXTENSION.quicTransportParameters);
    if (parameters) this.peerTransportParameters = parameters;
    else if (this.options.requireTransportParameters ?? true) throw new TlsAlert(ALERT.missingExtension, 'no quic_transport_parameters');
    this.transcript.add(message.raw);
    this.state = 'wait CertificateRequest';
  }

  private onCertificateRequest(message: HandshakeMessage): void {
    const request = decodeCertificateRequest(message.body);
    // Only post-handshake requests have a context (RFC 8446 §4.3.2), and QUIC has none.
    if (request.context.length !== 0) throw new TlsAlert(ALERT.illegalParameter, 'a CertificateRequest context during the handshake');
    const algorithms = request.extensions.get(EXTENSION.signatureAlgorithms);
    if (!algorithms) throw new TlsAlert(ALERT.missingExtension, 'CertificateRequest without signature_algorithms');
    if (!decodeCodeList(algorithms, 'signature_algorithms').includes(SIGNATURE_SCHEME.ed25519)) {
      throw new TlsAlert(ALERT.handshakeFailure, 'the server takes no ed25519 signature, the only kind a Solana identity makes');
    }
    this.certificateRequestContext = request.context;
    this.transcript.add(message.raw);
    this.state = 'wait Certificate';
  }

  private onCertificate(message: HandshakeMessage): void {
    const certificate = decodeCertificate(message.body);
    if (certificate.context.length !== 0) throw new TlsAlert(ALERT.illegalParameter, "a context in the server's Certificate");
    const first = certificate.certificates[0];
    if (!first) throw new TlsAlert(ALERT.decodeError, 'the server sent no certificate'); // RFC 8446 §4.4.2.4
    this.serverKey = publicKeyOfCertificate(first);
    this.transcript.add(message.raw);
    this.state = 'wait CertificateVerify';
  }

  private onCertificateVerify(message: HandshakeMessage): void {
    const verify = decodeCertificateVerify(message.body);
    checkCertificateVerify(this.serverKey!, verify.scheme, verify.signature, 'server', this.transcript.current(), SERVER_SIGNATURE_SCHEMES);
    this.transcript.add(message.raw);
    this.state = 'wait Finished';
  }

  private onFinished(message: HandshakeMessage, output: OutputCollector): void {
    const handshake = this.handshake!;
    checkFinished(decodeFinished(message.body, HASH_LENGTH), handshake.traffic.server, this.transcript.current(), "the server's");
    this.transcript.add(message.raw);
    const application = applicationTrafficSecrets(masterSecret(handshake.secret), this.transcript.current());
    output.secrets.push({ level: 'application', ...application });
    const flight: Buffer[] = [];
    if (this.certificateRequestContext !== undefined) {
      const certificate = encodeCertificate({ context: this.certificateRequestContext, certificates: [this.certificate] });
      this.transcript.add(certificate);
      const signature = signCertificateVerify(this.options.identity.privateKey, 'client', this.transcript.current());
      const verify = encodeCertificateVerify({ scheme: SIGNATURE_SCHEME.ed25519, signature });
      this.transcript.add(verify);
      flight.push(certificate, verify);
    }
    const finished = encodeFinished(finishedVerifyData(handshake.traffic.client, this.transcript.current()));
    this.transcript.add(finished);
    flight.push(finished);
    output.write('handshake', ...flight);
    const serverIdentity = rawEd25519Key(this.serverKey!);
    output.complete = {
      alpn: this.options.alpn,
      peerTransportParameters: this.peerTransportParameters,
      ...(serverIdentity ? { peerIdentity: serverIdentity } : {}),
    };
    this.state = 'connected';
  }
}

/**
 * A HelloRetryRequest is always refused. One that names a group is illegal_parameter whatever
 * the group: X25519 was in key_share already, and no other group was offered (RFC 8446
 * §4.1.4). One without (a cookie alone, for address validation that QUIC does with Retry) is
 * not supported: handshake_failure.
 */
function refuseRetry(retry: ServerHello): never {
  const keyShare = retry.extensions.get(EXTENSION.keyShare);
  if (keyShare) {
    const group = decodeRetryKeyShare(keyShare);
    const why = group === GROUP_X25519 ? 'X25519, which the ClientHello already had a key share for' : `group ${group}, never offered`;
    throw new TlsAlert(ALERT.illegalParameter, `HelloRetryRequest for ${why}`);
  }
  throw new TlsAlert(ALERT.handshakeFailure, 'HelloRetryRequest without a new group: not supported');
}
