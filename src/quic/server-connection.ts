/**
 * The server side of a QUIC connection, as a TPU serves it: the handshake answered with our
 * identity and ALPN, the client's identity read from its certificate, no stream credit
 * until then (as Agave: a connection's credit depends on who it is), transactions taken
 * from the client's unidirectional streams, at most three times the bytes received sent
 * before the client's address is validated (RFC 9000 §8.1), HANDSHAKE_DONE when complete.
 */
import { MAX_ACK_DELAY_MS, QuicConnection, type ConnectionSettings } from './connection';
import type { Frame } from './frames';
import type { Assembled } from './packet-assembly';
import { initialSecrets, PacketKeys } from './packet-protection';
import { CONNECTION_ID_LIMIT } from './peer-connection-ids';
import type { ParsedPacket } from './packets';
import { InvalidStream, INVALID_STREAM_CODE, ReceiveStreams } from './receive-streams';
import type { TlsOutput, TlsSession } from './tls-session';
import { decodeTransportParameters, encodeTransportParameters } from './transport-parameters';
import { encodeVarint, QuicError, TRANSPORT_ERROR } from './wire';

export interface ServerOptions extends ConnectionSettings {
  /** The connection ID the client's Initial was sent to (Initial keys derive from it), and the client's own. */
  readonly clientDcid: Buffer;
  readonly clientScid: Buffer;
  /** The client's very first destination ID: `clientDcid`, unless a Retry came between. */
  readonly originalDcid: Buffer;
  /** Our source ID in the Retry, when there was one. */
  readonly retrySource?: Buffer;
  /** Ours, chosen by the endpoint. */
  readonly scid: Buffer;
  readonly statelessResetToken: Buffer;
  /** Whether a Retry token already proved the client's address. */
  readonly addressValidated: boolean;
  readonly tls: (transportParameters: Buffer) => TlsSession;
  /** The longest stream (transaction) taken. */
  readonly maxStreamBytes: number;
  /** Streams a peer may have open at once, by its identity (its stake), once the handshake names it. */
  readonly streamWindow: (identity: Buffer | undefined) => number;
}

export class QuicServerConnection extends QuicConnection<never> {
  readonly scid: Buffer;
  protected dcid: Buffer;
  protected readonly tls: TlsSession;
  readonly clientDcid: Buffer;
  peerIdentity: Buffer | undefined;
  private readonly streams: ReceiveStreams;
  private readonly clientScid: Buffer;
  private readonly streamWindow: ServerOptions['streamWindow'];
  private addressValidated: boolean;
  private bytesReceived = 0;
  private bytesSent = 0;

  constructor(options: ServerOptions) {
    super('server', options);
    this.scid = options.scid;
    this.dcid = options.clientScid;
    this.clientScid = options.clientScid;
    this.clientDcid = options.clientDcid;
    this.addressValidated = options.addressValidated;
    this.streamWindow = options.streamWindow;
    this.streams = new ReceiveStreams(options.maxStreamBytes, 0);
    const secrets = initialSecrets(options.clientDcid);
    this.spaces.initial.sendKeys = new PacketKeys(secrets.server);
    this.spaces.initial.recvKeys = new PacketKeys(secrets.client);
    this.tls = options.tls(
      encodeTransportParameters({
        originalDestinationConnectionId: options.originalDcid,
        initialSourceConnectionId: this.scid,
        retrySourceConnectionId: options.retrySource,
        statelessResetToken: options.statelessResetToken,
        maxIdleTimeout: this.localIdleMs,
        maxUdpPayloadSize: Math.max(this.maxDatagram, 1200),
        maxAckDelay: MAX_ACK_DELAY_MS,
        initialMaxData: this.streams.initialMaxData,
        initialMaxStreamDataUni: options.maxStreamBytes,
        // No stream credit until the handshake says who the client is (Agave does the same).
        initialMaxStreamsUni: 0,
        initialMaxStreamsBidi: 0,
        activeConnectionIdLimit: CONNECTION_ID_LIMIT,
        disableActiveMigration: true,
      }),
    );
  }

  override receive(datagram: Buffer, now: number): void {
    // A datagram with an Initial packet under 1,200 bytes is discarded whole (RFC 9000 §14.1).
    if (datagram.length < 1200 && (datagram[0]! & 0xb0) === 0x80) return;
    this.bytesReceived += datagram.length;
    super.receive(datagram, now);
  }

  protected isOurs(dcid: Buffer): boolean {
    return dcid.equals(this.scid) || dcid.equals(this.clientDcid);
  }

  protected receiveSpecial(): void {}

  protected authenticated(parsed: ParsedPacket): void {
    // A Handshake packet proves the client's address and ends the Initial space (RFC 9001 §4.9.1).
    if (parsed.type === 'handshake') {
      this.addressValidated = true;
      this.discard('initial');
    }
  }

  protected receiveStreamFrame(frame: Extract<Frame, { streamId: number }>, now: number): void {
    switch (frame.type) {
      case 'stream':
        try {
          const data = this.streams.receive(frame.streamId, frame.offset, frame.data, frame.fin);
          if (data !== null) this.events.push({ type: 'stream', data });
        } catch (error) {
          if (!(error instanceof InvalidStream)) throw error;
          this.close(INVALID_STREAM_CODE, error.message, now);
          return;
        }
        this.renewCredit();
        return;
      case 'reset-stream':
        this.streams.reset(frame.streamId, frame.finalSize);
        this.renewCredit();
        return;
      case 'stream-data-blocked':
        return;
      default:
        throw new QuicError(TRANSPORT_ERROR.STREAM_STATE_ERROR, `${frame.type} on stream ${frame.streamId}: the server sends on no stream`);
    }
  }

  private renewCredit(): void {
    const streams = this.streams.renew();
    if (streams !== null) this.controls.push(Buffer.concat([Buffer.of(0x13), encodeVarint(streams)]));
    const data = this.streams.renewData();
    if (data !== null) this.controls.push(Buffer.concat([Buffer.of(0x10), encodeVarint(data)]));
  }

  protected receiveHandshakeDone(): void {
    throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, 'HANDSHAKE_DONE from a client');
  }

  protected handshakeComplete(complete: NonNullable<TlsOutput['complete']>, now: number): void {
    const peer = decodeTransportParameters(complete.peerTransportParameters, false);
    if (peer.initialSourceConnectionId?.equals(this.clientScid) !== true)
      throw new QuicError(TRANSPORT_ERROR.TRANSPORT_PARAMETER_ERROR, 'initial_source_connection_id does not match');
    this.adoptPeerParameters(peer);
    this.peerIdentity = complete.peerIdentity;
    this.addressValidated = true;
    this.handshakeConfirmed = true;
    this.state = 'established';
    this.controls.push(Buffer.of(0x1e));
    const streams = this.streams.setWindow(this.streamWindow(this.peerIdentity));
    if (streams !== null) this.controls.push(Buffer.concat([Buffer.of(0x13), encodeVarint(streams)]));
    this.discard('handshake');
    this.idle.received(now);
    this.events.push({ type: 'established', alpn: complete.alpn, peerIdentity: this.peerIdentity });
  }

  /** Applies `streamWindow` again (see QuicServerEndpoint.renewStreamWindows); true when MAX_STREAMS is to be sent. */
  renewStreamWindow(): boolean {
    if (this.state !== 'established') return false;
    const streams = this.streams.setWindow(this.streamWindow(this.peerIdentity));
    if (streams === null) return false;
    this.controls.push(Buffer.concat([Buffer.of(0x13), encodeVarint(streams)]));
    return true;
  }

  protected streamPieceAcked(): void {}
  protected streamPieceLost(): void {}

  protected sendContext() {
    return { streams: undefined, allowance: this.addressValidated ? Infinity : 3 * this.bytesReceived - this.bytesSent };
  }

  protected sentDatagram(built: Assembled): void {
    this.bytesSent += built.datagram.length;
  }

  protected undelivered(): never[] {
    return [];
  }
}
