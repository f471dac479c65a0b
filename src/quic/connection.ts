/**
 * What a QUIC v1 connection is on either side, as a state machine without I/O (the shape of
 * quinn-proto's `Connection`; an endpoint routes datagrams to it, and udp-driver.ts alone
 * owns the socket and the timer): datagrams in through `receive`, datagrams out through
 * `poll`, time in through `onTimeout`, what happened out through `takeEvents`.
 * This base holds what both roles share and leaves the handshake's direction, streams and
 * the choice of connection IDs to client-connection.ts and server-connection.ts. What it
 * shares is done by parts it owns, a file each: the packet number spaces and their keys
 * (packet-spaces.ts), opening a packet (packet-opening.ts) and 1-RTT key update
 * (key-phases.ts), ACKs, loss recovery and the probe timer (loss-recovery.ts), the idle,
 * keep-alive and unanswered time-outs (idle-timers.ts), the CONNECTION_CLOSE owed
 * (closing.ts) and the peer's connection IDs (peer-connection-ids.ts). What stays here is
 * the order of things: which packet is ours, which frame goes where, what is due when.
 */
import { Closing, closeFrameOf, type CloseFrame } from './closing';
import { isAckEliciting, parsePacketFrames, type Frame } from './frames';
import { IdleTimers } from './idle-timers';
import { KeyPhases } from './key-phases';
import { LossRecovery } from './loss-recovery';
import { assemble, type Assembled, type AssemblyContext } from './packet-assembly';
import { openPacket } from './packet-opening';
import { splitDatagram, type ParsedPacket } from './packets';
import type { PacketSpace } from './packet-space';
import { PacketSpaces } from './packet-spaces';
import { PeerConnectionIds } from './peer-connection-ids';
import { NewReno, RttEstimator, type SentItem } from './recovery';
import type { TlsOutput, TlsSession } from './tls-session';
import type { TransportParameters } from './transport-parameters';
import { TRANSPORT_ERROR } from './wire';

/** Who closed a connection: us, the peer, the idle time-out, or a stateless reset. */
type ClosedBy = 'local' | 'peer' | 'idle' | 'reset';

export type ConnectionEvent<T> =
  | { readonly type: 'established'; readonly alpn: string; readonly peerIdentity?: Buffer }
  /** A transaction of ours the peer acknowledged whole (every byte and the FIN). */
  | { readonly type: 'delivered'; readonly tag: T }
  | { readonly type: 'stopped'; readonly tag: T; readonly code: number }
  /** A whole stream the peer sent us (server side). */
  | { readonly type: 'stream'; readonly data: Buffer }
  | {
      readonly type: 'closed';
      readonly by: ClosedBy;
      readonly code: number;
      readonly application: boolean;
      readonly reason: string;
      /** Transactions never confirmed delivered. */
      readonly undelivered: T[];
    };

export type ConnectionState = 'handshaking' | 'established' | 'closing' | 'draining' | 'closed';

export interface ConnectionSettings {
  readonly now: number;
  readonly maxDatagramBytes?: number;
  readonly idleTimeoutMs?: number;
  /** A PING after this long without sending keeps the connection (and the peer's state) alive. */
  readonly keepAliveMs?: number;
  /**
   * Once established, what we sent waiting this long (at least three probe time-outs) with
   * nothing of it acknowledged ends the connection as idle: a peer that may still send but
   * takes nothing (a stalled leader), which the idle time-out alone would not catch while
   * its own probes keep arriving. 0: never.
   */
  readonly unansweredTimeoutMs?: number;
}

export const MAX_ACK_DELAY_MS = 25;
/** Our ACKs say how long they were held in units of 2^3 µs (the default exponent). */
const ACK_DELAY_EXPONENT = 3;
export const MIN_INITIAL_DATAGRAM = 1200;

export abstract class QuicConnection<T> {
  state: ConnectionState = 'handshaking';
  readonly spaces: PacketSpaces;
  readonly rtt = new RttEstimator();
  readonly congestion: NewReno;
  /** Frames for the application space owed to the peer (PATH_RESPONSE, HANDSHAKE_DONE, MAX_STREAMS…), each encoded. */
  readonly controls: Buffer[] = [];
  protected readonly events: ConnectionEvent<T>[] = [];
  protected abstract readonly tls: TlsSession;
  protected handshakeConfirmed = false;
  protected readonly maxDatagram: number;
  protected readonly localIdleMs: number;
  protected readonly idle: IdleTimers;
  /** Our connection ID, the one the peer addresses us by. */
  abstract readonly scid: Buffer;
  /** The peer's connection ID, the one we address it by. */
  protected abstract dcid: Buffer;
  protected token = Buffer.alloc(0);
  private readonly closing = new Closing();
  private readonly recovery: LossRecovery;
  private readonly keyPhases: KeyPhases;
  private readonly peerIds: PeerConnectionIds;

  constructor(
    protected readonly role: 'client' | 'server',
    settings: ConnectionSettings,
  ) {
    this.maxDatagram = settings.maxDatagramBytes ?? 1200;
    this.localIdleMs = settings.idleTimeoutMs ?? 30_000;
    this.congestion = new NewReno(this.maxDatagram);
    this.spaces = new PacketSpaces(MAX_ACK_DELAY_MS);
    this.recovery = new LossRecovery(role, this.spaces, this.rtt, this.congestion, this.controls, {
      acked: (item) => this.streamPieceAcked(item),
      lost: (item) => this.streamPieceLost(item),
    });
    this.idle = new IdleTimers(settings.now, this.localIdleMs, settings.keepAliveMs ?? 0, settings.unansweredTimeoutMs ?? 0, this.recovery);
    this.keyPhases = new KeyPhases(this.spaces.application);
    this.peerIds = new PeerConnectionIds(this.controls, this.spaces.application.sent);
  }

  /** Packets sent, and of them deemed lost (RFC 9002 §6.1). */
  get packetsSent(): number {
    return this.recovery.packetsSent;
  }

  get packetsLost(): number {
    return this.recovery.packetsLost;
  }

  // ---- what the roles add ----

  /** A packet that is not Initial, Handshake or 1-RTT (Retry, Version Negotiation): the client's business. */
  protected abstract receiveSpecial(parsed: ParsedPacket, now: number): void;
  /** Whether `dcid` addresses this connection. */
  protected abstract isOurs(dcid: Buffer): boolean;
  /** Called for each packet that authenticated, before its frames are processed. */
  protected abstract authenticated(parsed: ParsedPacket): void;
  protected abstract receiveStreamFrame(frame: Extract<Frame, { streamId: number }>, now: number): void;
  protected abstract receiveHandshakeDone(): void;
  protected abstract handshakeComplete(complete: NonNullable<TlsOutput['complete']>, now: number): void;
  /** A stream piece of ours was acknowledged or lost. */
  protected abstract streamPieceAcked(item: Extract<SentItem, { kind: 'stream' }>): void;
  protected abstract streamPieceLost(item: Extract<SentItem, { kind: 'stream' }>): void;
  /** What `poll` may add: our streams, and the bytes we may send before the peer's address is validated. */
  protected abstract sendContext(): Pick<AssemblyContext, 'streams'> & { allowance: number };
  protected abstract sentDatagram(built: Assembled): void;
  protected abstract undelivered(): T[];

  // ---- the application's side ----

  takeEvents(): ConnectionEvent<T>[] {
    return this.events.splice(0);
  }

  /** Closes with an application error code (0: done). */
  close(code = 0, reason = '', now: number): void {
    if (this.state === 'closing' || this.state === 'draining' || this.state === 'closed') return;
    this.enterClosing({ application: true, code, frameType: 0, reason }, now);
  }

  /** Refuses the connection: a transport close with CONNECTION_REFUSED (valid before the handshake ends, unlike an application close). */
  refuse(reason: string, now: number): void {
    if (this.isClosed) return;
    this.enterClosing({ application: false, code: TRANSPORT_ERROR.CONNECTION_REFUSED, frameType: 0, reason }, now);
  }

  get isClosed(): boolean {
    return this.state === 'closing' || this.state === 'draining' || this.state === 'closed';
  }

  // ---- datagrams in ----

  receive(datagram: Buffer, now: number): void {
    if (this.state === 'draining' || this.state === 'closed') return;
    if (this.state === 'closing') {
      this.closing.received();
      return;
    }
    let anyOpened = false;
    for (const packet of splitDatagram(datagram, this.scid.length)) {
      try {
        anyOpened = this.receivePacket(packet, now) || anyOpened;
      } catch (error) {
        this.failed(error, now);
        return;
      }
      if (this.isClosed) return;
    }
    if (!anyOpened && datagram.length >= 21 && this.peerIds.isStatelessReset(datagram))
      this.finish('reset', 0, false, 'stateless reset', now, true);
  }

  /** A protocol error: the connection closes with its code (a TLS alert as CRYPTO_ERROR). */
  protected failed(error: unknown, now: number): void {
    this.enterClosing(closeFrameOf(error), now);
  }

  /** Returns true if the packet decrypted. */
  private receivePacket(parsed: ParsedPacket, now: number): boolean {
    if (parsed.type === 'version-negotiation' || parsed.type === 'unsupported-version' || parsed.type === 'retry') {
      this.receiveSpecial(parsed, now);
      return false;
    }
    if (parsed.type === 'zero-rtt' || !this.isOurs(parsed.dcid)) return false;
    // A server reads no 1-RTT packet before the handshake completes (RFC 9001 §5.7); the client sends it again.
    if (parsed.type === 'one-rtt' && this.role === 'server' && this.state !== 'established') return false;
    const space = this.spaces[parsed.type === 'one-rtt' ? 'application' : parsed.type];
    const opened = openPacket(space, parsed, this.keyPhases, this.handshakeConfirmed);
    if (opened === null) return false;
    this.authenticated(parsed);
    if (space.acks.isDuplicate(opened.packetNumber)) return true;
    const frames = parsePacketFrames(opened.payload, parsed.type);
    this.idle.received(now);
    space.acks.received(opened.packetNumber, isAckEliciting(frames), now);
    for (const frame of frames) {
      this.receiveFrame(space, frame, now);
      if (this.isClosed) break;
    }
    return true;
  }

  private receiveFrame(space: PacketSpace, frame: Frame, now: number): void {
    switch (frame.type) {
      case 'ack':
        return this.recovery.receiveAck(space, frame, now, this.handshakeConfirmed);
      case 'crypto': {
        const data = space.cryptoIn.receive(frame.offset, frame.data);
        if (data.length > 0) this.applyTls(this.tls.receive(space.name, data), now);
        return;
      }
      case 'stream':
      case 'reset-stream':
      case 'stream-data-blocked':
      case 'stop-sending':
      case 'max-stream-data':
        return this.receiveStreamFrame(frame, now);
      case 'max-data':
      case 'max-streams':
        return this.receiveCredit(frame);
      case 'new-connection-id':
        return this.peerIds.receive(frame, this.dcid, (dcid) => (this.dcid = dcid));
      case 'path-challenge': {
        // Only the latest challenge is answered (RFC 9000 §8.2.2 allows it): a flood cannot grow the queue.
        const pending = this.controls.findIndex((control) => control[0] === 0x1b);
        if (pending >= 0) this.controls.splice(pending, 1);
        this.controls.push(Buffer.concat([Buffer.of(0x1b), frame.data]));
        return;
      }
      case 'connection-close':
        return this.finish('peer', frame.code, frame.application, frame.reason, now, true);
      case 'handshake-done':
        return this.receiveHandshakeDone();
      default:
      // PADDING, PING, NEW_TOKEN, DATA_BLOCKED, STREAMS_BLOCKED, RETIRE_CONNECTION_ID, PATH_RESPONSE: nothing to do.
    }
  }

  /** MAX_DATA and MAX_STREAMS: our sending credit (the client's streams). */
  protected receiveCredit(_frame: Extract<Frame, { type: 'max-data' | 'max-streams' }>): void {}

  protected applyTls(output: TlsOutput, now: number): void {
    this.spaces.applyTls(output, this.role);
    if (output.complete !== undefined) this.handshakeComplete(output.complete, now);
  }

  /** The peer's transport parameters, once checked: idle time-out and reset token taken. */
  protected adoptPeerParameters(peer: TransportParameters): void {
    this.recovery.adoptPeerParameters(peer);
    this.peerIds.adoptResetToken(peer.statelessResetToken);
    this.idle.adoptPeerIdleTimeout(peer.maxIdleTimeout);
  }

  /** RFC 9001 §4.9: Initial keys go with the first Handshake packet, Handshake keys when the handshake is confirmed. */
  protected discard(name: 'initial' | 'handshake'): void {
    if (this.spaces.discard(name)) this.recovery.discarded(this.spaces[name]);
  }

  // ---- datagrams out ----

  /** The next datagram to send, or null when there is nothing to send now. */
  poll(now: number): Buffer | null {
    if (this.state === 'draining' || this.state === 'closed') return null;
    this.keyPhases.updateIfDue(this.handshakeConfirmed);
    const send = this.sendContext();
    if (send.allowance < MIN_INITIAL_DATAGRAM && this.role === 'server') return null;
    const context: AssemblyContext = {
      now,
      spaces: this.spaces,
      dcid: this.dcid,
      scid: this.scid,
      token: this.token,
      keyPhase: this.keyPhases.phase,
      maxDatagram: Math.min(this.maxDatagram, send.allowance),
      padInitial: MIN_INITIAL_DATAGRAM,
      padOnlyAckEliciting: this.role === 'server',
      congestion: this.congestion,
      streams: this.state === 'established' ? send.streams : undefined,
      controls: this.state === 'established' ? this.controls : [],
      ackDelayExponent: ACK_DELAY_EXPONENT,
      ping: this.state === 'established' && this.idle.pingDue(now),
      close: undefined,
    };
    if (this.state === 'closing') {
      const close = this.closing.take();
      if (close === undefined) return null;
      return assemble({ ...context, streams: undefined, controls: [], close })?.datagram ?? null;
    }
    const built = assemble(context);
    if (built === null) return null;
    this.recovery.sent(built.packets, now);
    this.idle.sent(
      built.packets.some((packet) => packet.sent.ackEliciting),
      now,
    );
    this.sentDatagram(built);
    return built.datagram;
  }

  // ---- time ----

  /** When `onTimeout` must be called next (Infinity: nothing pending). */
  nextTimeout(): number {
    if (this.state === 'closed') return Infinity;
    if (this.state === 'closing' || this.state === 'draining') return this.closing.until;
    let next = Math.min(this.lossTimer(), this.idle.deadline(this.state === 'established'));
    // A deadline for something that cannot be sent now would only spin: an ACK while the
    // anti-amplification limit is reached (more bytes from the peer lift it), a keep-alive
    // while the congestion window is full (an acknowledgement or the loss timer frees it).
    if (this.sendContext().allowance >= MIN_INITIAL_DATAGRAM) next = Math.min(next, this.spaces.ackDeadline());
    if (this.state === 'established' && this.congestion.canSend(this.maxDatagram)) next = Math.min(next, this.idle.keepAliveDeadline());
    return next;
  }

  private lossTimer(): number {
    return this.recovery.deadline(this.idle.lastSent, this.handshakeConfirmed, this.state === 'established');
  }

  onTimeout(now: number): void {
    if (this.state === 'closed') return;
    if (this.state === 'closing' || this.state === 'draining') {
      if (now >= this.closing.until) this.state = 'closed';
      return;
    }
    const idle = this.idle.expired(now, this.state === 'established');
    if (idle !== undefined) return this.finish('idle', 0, false, idle, now, false);
    if (now < this.lossTimer()) return;
    this.recovery.expired(now);
  }

  // ---- closing ----

  private enterClosing(frame: CloseFrame, now: number): void {
    this.closing.start(frame, this.spaces.application.sendKeys !== null);
    this.finish('local', frame.code, frame.application, frame.reason, now, false);
  }

  protected finish(by: ClosedBy, code: number, application: boolean, reason: string, now: number, draining: boolean): void {
    this.events.push({ type: 'closed', by, code, application, reason, undelivered: this.undelivered() });
    if (by === 'idle' || by === 'reset') {
      this.state = 'closed';
      return;
    }
    this.state = draining ? 'draining' : 'closing';
    this.closing.until = now + 3 * this.recovery.ptoDuration('application');
  }
}
