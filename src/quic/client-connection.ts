/**
 * The client side of a QUIC connection to a TPU: connection IDs chosen at random, the
 * ClientHello in Initial packets padded to 1,200 bytes, Retry and Version Negotiation
 * followed, the server's transport parameters checked against what the packets said, and
 * one unidirectional stream per transaction within the server's stream credit. A
 * transaction is delivered once the server acknowledged all of its bytes and its FIN.
 *
 * Not done, because a TPU client does not need it: receiving streams, datagrams, 0-RTT,
 * migration, path MTU discovery (packets stay at `maxDatagramBytes`). On MTU: stream frames
 * of consecutive transactions share packets, so 1,232-byte transactions take 1.065 packets
 * each at 1,200 bytes (5,000 sent, acknowledgements included); 1,452-byte packets would hold
 * one each and never two, saving at most 6 % of packets, not worth a probing state machine.
 */
import { randomBytes } from 'node:crypto';
import { QuicConnection, MAX_ACK_DELAY_MS, type ConnectionSettings } from './connection';
import type { Frame } from './frames';
import { initialCryptoRoom, type Assembled } from './packet-assembly';
import { initialSecrets, PacketKeys, retryIntegrityTag } from './packet-protection';
import { CONNECTION_ID_LIMIT } from './peer-connection-ids';
import type { ParsedPacket } from './packets';
import type { SentItem } from './recovery';
import { UniStreams } from './send-streams';
import type { TlsOutput, TlsSession } from './tls-session';
import { decodeTransportParameters, encodeTransportParameters } from './transport-parameters';
import { encodeVarint, QuicError, TRANSPORT_ERROR } from './wire';

export interface ClientOptions extends ConnectionSettings {
  /** Builds the TLS client with our encoded transport parameters; `start` is its ClientHello. */
  readonly tls: (transportParameters: Buffer) => { session: TlsSession; start: TlsOutput };
  /** Transactions that may wait for stream credit. */
  readonly maxWaiting?: number;
  readonly random?: (length: number) => Buffer;
}

export class QuicClientConnection<T> extends QuicConnection<T> {
  readonly scid: Buffer;
  protected dcid: Buffer;
  protected readonly tls: TlsSession;
  readonly streams: UniStreams<T>;
  private readonly originalDcid: Buffer;
  private retrySource: Buffer | undefined;
  private serverInitialCid: Buffer | undefined;

  constructor(options: ClientOptions) {
    super('client', options);
    const random = options.random ?? randomBytes;
    this.scid = random(8);
    this.dcid = random(8);
    this.originalDcid = this.dcid;
    this.streams = new UniStreams<T>(2, options.maxWaiting ?? 4096);
    this.setInitialKeys();
    const parameters = encodeTransportParameters({
      initialSourceConnectionId: this.scid,
      maxIdleTimeout: this.localIdleMs,
      maxUdpPayloadSize: Math.max(this.maxDatagram, 1200),
      maxAckDelay: MAX_ACK_DELAY_MS,
      activeConnectionIdLimit: CONNECTION_ID_LIMIT,
    });
    const { session, start } = options.tls(parameters);
    this.tls = session;
    this.applyTls(start, options.now);
  }

  private setInitialKeys(): void {
    const secrets = initialSecrets(this.dcid);
    this.spaces.initial.sendKeys = new PacketKeys(secrets.client);
    this.spaces.initial.recvKeys = new PacketKeys(secrets.server);
  }

  /** Queues a transaction on a stream of its own; false if the connection cannot take it (closed, or the queue is full). */
  send(data: Buffer, tag: T): boolean {
    if (this.isClosed) return false;
    return this.streams.enqueue(data, tag);
  }

  protected isOurs(dcid: Buffer): boolean {
    return dcid.equals(this.scid);
  }

  protected receiveSpecial(parsed: ParsedPacket, now: number): void {
    if (parsed.type === 'version-negotiation') {
      // Only before anything came from the server, and only if it really lacks version 1 (RFC 9000 §6.2).
      if (
        this.serverInitialCid === undefined &&
        this.retrySource === undefined &&
        parsed.dcid.equals(this.scid) &&
        parsed.scid.equals(this.dcid) &&
        !parsed.versions.includes(1)
      )
        this.finish('peer', 0, false, `the server speaks no QUIC version 1 (it offers ${parsed.versions.join(', ')})`, now, true);
      return;
    }
    if (parsed.type !== 'retry') return;
    // One Retry, before anything else from the server, with a valid tag and a token (RFC 9000 §17.2.5.2).
    if (
      this.serverInitialCid !== undefined ||
      this.retrySource !== undefined ||
      parsed.token.length === 0 ||
      !parsed.dcid.equals(this.scid)
    )
      return;
    const tag = retryIntegrityTag(this.originalDcid, parsed.packet.subarray(0, parsed.packet.length - 16));
    if (!tag.equals(parsed.packet.subarray(parsed.packet.length - 16))) return;
    // Every Initial from now on must carry the token (RFC 9000 §17.2.5.2): one too long for an
    // Initial would leave us sending nothing until the idle time-out. The server's Retry ends
    // the connection, so it is closed as by the server: a sender backs off from it as from a refusal.
    if (initialCryptoRoom(parsed.scid, this.scid, parsed.token, this.maxDatagram) === 0)
      return this.finish(
        'peer',
        TRANSPORT_ERROR.CONNECTION_REFUSED,
        false,
        `the server's Retry token of ${parsed.token.length} bytes leaves no room for the ClientHello in a ${this.maxDatagram}-byte Initial`,
        now,
        true,
      );
    this.retrySource = Buffer.from(parsed.scid);
    this.dcid = Buffer.from(parsed.scid);
    this.token = Buffer.from(parsed.token);
    this.setInitialKeys();
    // What was sent is gone without a loss signal; the ClientHello goes out again, with the token.
    const initial = this.spaces.initial;
    for (const packet of initial.sent.clear()) if (packet.inFlight) this.congestion.removed(packet.size);
    initial.cryptoOut.restart();
    this.idle.received(now);
  }

  protected authenticated(parsed: ParsedPacket): void {
    // The server's first Initial names the connection ID we use from then on (RFC 9000 §7.2).
    if (parsed.type === 'initial' && this.serverInitialCid === undefined) {
      this.serverInitialCid = Buffer.from(parsed.scid);
      this.dcid = this.serverInitialCid;
    }
  }

  protected receiveStreamFrame(frame: Extract<Frame, { streamId: number }>): void {
    const ours = this.streams.isOurs(frame.streamId);
    if (frame.type === 'max-stream-data') return this.streams.maxStreamData(frame.streamId, frame.maximum);
    if (frame.type === 'stop-sending') {
      if (!ours) throw new QuicError(TRANSPORT_ERROR.STREAM_STATE_ERROR, `STOP_SENDING for stream ${frame.streamId}, which is not ours`);
      const stopped = this.streams.stop(frame.streamId);
      if (stopped === undefined) return;
      // The stream ends with RESET_STREAM, which tells the server its final size and frees its credit (RFC 9000 §3.5).
      this.controls.push(
        Buffer.concat([Buffer.of(0x04), encodeVarint(frame.streamId), encodeVarint(frame.code), encodeVarint(stopped.finalSize)]),
      );
      this.events.push({ type: 'stopped', tag: stopped.tag, code: frame.code });
      return;
    }
    if (ours) throw new QuicError(TRANSPORT_ERROR.STREAM_STATE_ERROR, `${frame.type} on stream ${frame.streamId}, which only we send on`);
    throw new QuicError(TRANSPORT_ERROR.STREAM_LIMIT_ERROR, `the server opened stream ${frame.streamId}; this client takes none`);
  }

  protected override receiveCredit(frame: Extract<Frame, { type: 'max-data' | 'max-streams' }>): void {
    if (frame.type === 'max-data') this.streams.maxDataFrame(frame.maximum);
    else if (!frame.bidi) this.streams.maxStreams(frame.maximum);
  }

  protected receiveHandshakeDone(): void {
    if (this.handshakeConfirmed) return;
    this.handshakeConfirmed = true;
    this.discard('handshake');
  }

  protected handshakeComplete(complete: NonNullable<TlsOutput['complete']>, now: number): void {
    const peer = decodeTransportParameters(complete.peerTransportParameters, true);
    // The connection IDs the server saw must be the ones the packets carried (RFC 9000 §7.3).
    const fail = (message: string) => new QuicError(TRANSPORT_ERROR.TRANSPORT_PARAMETER_ERROR, message);
    if (peer.originalDestinationConnectionId?.equals(this.originalDcid) !== true)
      throw fail('original_destination_connection_id does not match');
    if (this.serverInitialCid === undefined || peer.initialSourceConnectionId?.equals(this.serverInitialCid) !== true)
      throw fail('initial_source_connection_id does not match');
    if ((this.retrySource === undefined) !== (peer.retrySourceConnectionId === undefined))
      throw fail('retry_source_connection_id does not match');
    if (this.retrySource !== undefined && !this.retrySource.equals(peer.retrySourceConnectionId!))
      throw fail('retry_source_connection_id does not match');
    this.adoptPeerParameters(peer);
    this.streams.configure(peer.initialMaxStreamsUni, peer.initialMaxData, peer.initialMaxStreamDataUni);
    this.state = 'established';
    this.idle.received(now);
    this.events.push({ type: 'established', alpn: complete.alpn });
  }

  protected streamPieceAcked(item: Extract<SentItem, { kind: 'stream' }>): void {
    const tag = this.streams.acked(item);
    if (tag !== undefined) this.events.push({ type: 'delivered', tag });
  }

  protected streamPieceLost(item: Extract<SentItem, { kind: 'stream' }>): void {
    this.streams.lost(item);
  }

  protected sendContext() {
    return { streams: this.streams as UniStreams<unknown>, allowance: Infinity };
  }

  protected sentDatagram(built: Assembled): void {
    // The client's first Handshake packet ends the Initial space (RFC 9001 §4.9.1).
    if (built.packets.some((packet) => packet.space === 'handshake')) this.discard('initial');
  }

  protected undelivered(): T[] {
    return this.streams.drain();
  }
}
