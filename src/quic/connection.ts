/**
 * What a QUIC v1 connection is on either side, as a state machine without I/O (the shape of
 * quinn-proto, and STYLE's sans-I/O rule): datagrams in through `receive`, datagrams out
 * through `poll`, time in through `onTimeout`, what happened out through `takeEvents`.
 * This base holds what both roles share — packet protection and key update, frames, ACKs,
 * loss recovery and congestion control, idle and closing — and leaves the handshake's
 * direction, streams and connection IDs to client-connection.ts and server-connection.ts.
 */
import { allowedInLongHeader, isAckEliciting, parseFrames, type Frame } from './frames';
import { assemble, type Assembled, type AssemblyContext } from './packet-assembly';
import { decodePacketNumber, PacketKeys, unprotectHeader } from './packet-protection';
import { splitDatagram, type ParsedPacket } from './packets';
import { PacketSpace } from './packet-space';
import { isPersistentCongestion, NewReno, RttEstimator, SPACES, type SentItem, type SentPacket, type SpaceName } from './recovery';
import { alertOf, type TlsOutput, type TlsSession } from './tls-session';
import type { TransportParameters } from './transport-parameters';
import { encodeVarint, QuicError, TRANSPORT_ERROR } from './wire';

export type ConnectionEvent<T> =
  | { readonly type: 'established'; readonly alpn: string; readonly peerIdentity?: Buffer }
  /** A transaction of ours the peer acknowledged whole (every byte and the FIN). */
  | { readonly type: 'delivered'; readonly tag: T }
  | { readonly type: 'stopped'; readonly tag: T; readonly code: number }
  /** A whole stream the peer sent us (server side). */
  | { readonly type: 'stream'; readonly data: Buffer }
  | {
      readonly type: 'closed';
      /** Who closed it: us, the peer, the idle time-out, or a stateless reset. */
      readonly by: 'local' | 'peer' | 'idle' | 'reset';
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
/** Connection IDs we keep of the peer's (active_connection_id_limit). */
export const CONNECTION_ID_LIMIT = 2;
/** Connection IDs retired and not yet acknowledged before the peer is refused (RFC 9000 §5.1.2). */
const MAX_RETIREMENTS_OUTSTANDING = 8;
/** Packets sealed under one 1-RTT key before a key update: half of AES-128-GCM's confidentiality limit, 2^23 (RFC 9001 §6.6). */
export const KEY_UPDATE_PACKETS = 2 ** 22;

type CloseFrame = { application: boolean; code: number; frameType: number; reason: string };

export abstract class QuicConnection<T> {
  state: ConnectionState = 'handshaking';
  readonly spaces: Record<SpaceName, PacketSpace>;
  readonly rtt = new RttEstimator();
  readonly congestion: NewReno;
  /** Frames for the application space owed to the peer (PATH_RESPONSE, HANDSHAKE_DONE, MAX_STREAMS…), each encoded. */
  readonly controls: Buffer[] = [];
  packetsSent = 0;
  packetsLost = 0;
  protected readonly events: ConnectionEvent<T>[] = [];
  protected abstract readonly tls: TlsSession;
  protected peer: TransportParameters | undefined;
  protected handshakeConfirmed = false;
  protected readonly maxDatagram: number;
  protected readonly localIdleMs: number;
  protected idleMs: number;
  protected lastReceived: number;
  protected lastSent: number;
  /** The peer's stateless reset tokens: its transport parameter's (for the first ID), then one per connection ID it issued. */
  protected peerResetToken: Buffer | undefined;
  private readonly resetTokensBySequence = new Map<number, Buffer>();
  private retiredBelow = 0;
  /** Our connection ID, the one the peer addresses us by. */
  abstract readonly scid: Buffer;
  /** The peer's connection ID, the one we address it by. */
  protected abstract dcid: Buffer;
  protected token = Buffer.alloc(0);
  private readonly keepAliveMs: number;
  private readonly unansweredMs: number;
  /** Since when ack-eliciting packets have been in flight with none acknowledged (Infinity: none waiting). */
  private unansweredSince = Infinity;
  private ptoCount = 0;
  private lastActivity = 0;
  private closeUntil = Infinity;
  private closeFrame: CloseFrame | undefined;
  private closeDue = false;
  private keyPhase: 0 | 1 = 0;
  private readonly peerCids = new Map<number, Buffer>();
  private dcidSequence = 0;
  private nextRecvKeys: PacketKeys | null = null;
  /** The first packet number sealed under the current 1-RTT key. */
  private keyPhaseStart = 0;
  /** Whether the peer has sent in our current key phase (a new update may start only then). */
  private keyUpdateAnswered = true;
  private previousRecvKeys: PacketKeys | null = null;

  constructor(
    protected readonly role: 'client' | 'server',
    settings: ConnectionSettings,
  ) {
    this.maxDatagram = settings.maxDatagramBytes ?? 1200;
    this.localIdleMs = settings.idleTimeoutMs ?? 30_000;
    this.idleMs = this.localIdleMs;
    this.keepAliveMs = settings.keepAliveMs ?? 0;
    this.unansweredMs = settings.unansweredTimeoutMs ?? 0;
    this.lastReceived = settings.now;
    this.lastSent = settings.now;
    this.congestion = new NewReno(this.maxDatagram);
    this.spaces = {
      initial: new PacketSpace('initial', MAX_ACK_DELAY_MS),
      handshake: new PacketSpace('handshake', MAX_ACK_DELAY_MS),
      application: new PacketSpace('application', MAX_ACK_DELAY_MS),
    };
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
      this.closeDue = true;
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
    if (!anyOpened && datagram.length >= 21 && this.isStatelessReset(datagram))
      this.finish('reset', 0, false, 'stateless reset', now, true);
  }

  /** A protocol error: the connection closes with its code (a TLS alert as CRYPTO_ERROR). */
  protected failed(error: unknown, now: number): void {
    if (error instanceof QuicError) {
      this.enterClosing({ application: false, code: error.code, frameType: error.frameType, reason: error.message }, now);
      return;
    }
    const alert = alertOf(error);
    const reason = error instanceof Error ? error.message : String(error);
    const code = alert === undefined ? TRANSPORT_ERROR.INTERNAL_ERROR : TRANSPORT_ERROR.CRYPTO_ERROR + alert;
    this.enterClosing({ application: false, code, frameType: 0, reason }, now);
  }

  private isStatelessReset(datagram: Buffer): boolean {
    const tail = datagram.subarray(datagram.length - 16);
    if (this.dcidSequence === 0 && this.peerResetToken?.equals(tail) === true) return true;
    for (const token of this.resetTokensBySequence.values()) if (token.equals(tail)) return true;
    return false;
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
    if (space.discarded || space.recvKeys === null) return false;
    const unprotected = unprotectHeader(space.recvKeys, parsed.packet, parsed.pnOffset);
    if (unprotected === null) return false;
    const packetNumber = decodePacketNumber(space.acks.largest, unprotected.truncated, unprotected.pnLength);
    const sealed = parsed.packet.subarray(unprotected.header.length);
    const payload =
      parsed.type === 'one-rtt'
        ? this.openOneRtt(unprotected.header, sealed, packetNumber)
        : space.recvKeys.open(unprotected.header, sealed, packetNumber);
    if (payload === null) return false;
    // Reserved bits must be zero once the packet authenticated (RFC 9000 §17.2, §17.3.1).
    if ((unprotected.header[0]! & (parsed.type === 'one-rtt' ? 0x18 : 0x0c)) !== 0)
      throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, 'reserved header bits set');
    this.authenticated(parsed);
    if (space.acks.isDuplicate(packetNumber)) return true;
    const frames = parseFrames(payload);
    if (parsed.type !== 'one-rtt')
      for (const frame of frames)
        if (!allowedInLongHeader(frame))
          throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, `a ${frame.type} frame in a ${parsed.type} packet`);
    this.lastReceived = now;
    space.acks.received(packetNumber, isAckEliciting(frames), now);
    for (const frame of frames) {
      this.receiveFrame(space, frame, now);
      if (this.isClosed) break;
    }
    return true;
  }

  /** Opens a 1-RTT packet with the keys its key phase bit names, following a key update by the peer (RFC 9001 §6). */
  private openOneRtt(header: Buffer, sealed: Buffer, packetNumber: number): Buffer | null {
    const space = this.spaces.application;
    const phase = ((header[0]! >> 2) & 1) as 0 | 1;
    if (phase === this.keyPhase) {
      const payload = space.recvKeys!.open(header, sealed, packetNumber);
      // The peer sends in the phase we moved to: it has followed our update, and another may come later.
      if (payload !== null) this.keyUpdateAnswered = true;
      return payload;
    }
    // The other phase: a packet of the previous one (late, or the peer has not seen our update yet) …
    if (this.previousRecvKeys !== null) {
      const payload = this.previousRecvKeys.open(header, sealed, packetNumber);
      if (payload !== null || !this.keyUpdateAnswered) return payload;
    }
    // … or the peer's first of the next (RFC 9001 §6.3).
    if (!this.handshakeConfirmed) return null;
    this.nextRecvKeys ??= space.recvKeys!.next();
    const payload = this.nextRecvKeys.open(header, sealed, packetNumber);
    if (payload === null) return null;
    this.previousRecvKeys = space.recvKeys;
    space.recvKeys = this.nextRecvKeys;
    this.nextRecvKeys = null;
    space.sendKeys = space.sendKeys!.next();
    this.keyPhase = phase;
    this.keyPhaseStart = space.nextPacketNumber;
    return payload;
  }

  /** Our own key update, before the AEAD limit (RFC 9001 §6.6), once the peer followed the last one. */
  private updateKeysIfDue(): void {
    const space = this.spaces.application;
    if (!this.handshakeConfirmed || !this.keyUpdateAnswered || space.sendKeys === null) return;
    if (space.nextPacketNumber - this.keyPhaseStart < KEY_UPDATE_PACKETS) return;
    this.previousRecvKeys = space.recvKeys;
    space.recvKeys = space.recvKeys!.next();
    this.nextRecvKeys = null;
    space.sendKeys = space.sendKeys.next();
    this.keyPhase = this.keyPhase === 0 ? 1 : 0;
    this.keyPhaseStart = space.nextPacketNumber;
    this.keyUpdateAnswered = false;
  }

  private receiveFrame(space: PacketSpace, frame: Frame, now: number): void {
    switch (frame.type) {
      case 'ack':
        return this.receiveAck(space, frame, now);
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
        return this.receiveNewConnectionId(frame);
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

  /** NEW_CONNECTION_ID: kept for when the one in use is retired (we never migrate), its reset token noted. */
  private receiveNewConnectionId(frame: Extract<Frame, { type: 'new-connection-id' }>): void {
    const known = frame.sequence === this.dcidSequence ? this.dcid : this.peerCids.get(frame.sequence);
    if (known !== undefined || this.retiredBelow > frame.sequence) {
      // Seen before (a retransmission) or retired already: nothing new (RFC 9000 §19.15).
      if (known !== undefined && !known.equals(frame.connectionId))
        throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, `connection ID sequence ${frame.sequence} sent twice with different IDs`);
    } else {
      this.peerCids.set(frame.sequence, Buffer.from(frame.connectionId));
      this.resetTokensBySequence.set(frame.sequence, Buffer.from(frame.resetToken));
    }
    if (frame.retirePriorTo > this.retiredBelow) {
      for (const sequence of [...this.peerCids.keys()]) if (sequence < frame.retirePriorTo) this.retire(sequence);
      if (this.dcidSequence < frame.retirePriorTo) {
        // The ID in use is retired: move to the oldest one left (RFC 9000 §5.1.2).
        this.retire(this.dcidSequence);
        const next = [...this.peerCids.entries()].sort((a, b) => a[0] - b[0])[0];
        if (next === undefined) throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, 'every connection ID of the peer was retired');
        [this.dcidSequence, this.dcid] = next;
        this.peerCids.delete(next[0]);
      }
      this.retiredBelow = frame.retirePriorTo;
    }
    if (this.peerCids.size + 1 > CONNECTION_ID_LIMIT)
      throw new QuicError(
        TRANSPORT_ERROR.CONNECTION_ID_LIMIT_ERROR,
        `more connection IDs than active_connection_id_limit (${CONNECTION_ID_LIMIT})`,
      );
  }

  /** Retires a connection ID of the peer's: its reset token no longer counts, and RETIRE_CONNECTION_ID goes out. */
  private retire(sequence: number): void {
    this.peerCids.delete(sequence);
    this.resetTokensBySequence.delete(sequence);
    // A peer that retires faster than it acknowledges would make these pile up (RFC 9000 §5.1.2 lets us refuse).
    const outstanding = this.controls.filter((frame) => frame[0] === 0x19).length + this.retirementsInFlight();
    if (outstanding >= MAX_RETIREMENTS_OUTSTANDING)
      throw new QuicError(
        TRANSPORT_ERROR.CONNECTION_ID_LIMIT_ERROR,
        `more than ${MAX_RETIREMENTS_OUTSTANDING} connection IDs retired and not yet acknowledged`,
      );
    this.controls.push(Buffer.concat([Buffer.of(0x19), encodeVarint(sequence)]));
  }

  private retirementsInFlight(): number {
    let count = 0;
    for (const packet of this.spaces.application.sent.packets.values())
      for (const item of packet.items) if (item.kind === 'control' && item.frame[0] === 0x19) count++;
    return count;
  }

  /** MAX_DATA and MAX_STREAMS: our sending credit (the client's streams). */
  protected receiveCredit(_frame: Extract<Frame, { type: 'max-data' | 'max-streams' }>): void {}

  private receiveAck(space: PacketSpace, frame: Extract<Frame, { type: 'ack' }>, now: number): void {
    const largest = frame.ranges[0]!.largest;
    if (largest >= space.nextPacketNumber)
      throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, `an ACK of packet ${largest}, never sent`, 0x02);
    const acked = space.sent.acknowledge(frame.ranges);
    if (acked.length === 0) return;
    space.sent.largestAcked = Math.max(space.sent.largestAcked, largest);
    const newest = acked.find((packet) => packet.packetNumber === largest);
    if (newest !== undefined && acked.some((packet) => packet.ackEliciting)) {
      const peerDelay = (frame.delay * 2 ** (this.peer?.ackDelayExponent ?? 3)) / 1000;
      const delayMs =
        space.name === 'application' ? Math.min(peerDelay, this.handshakeConfirmed ? (this.peer?.maxAckDelay ?? 25) : Infinity) : 0;
      this.rtt.update(now - newest.timeSent, delayMs);
    }
    for (const packet of acked) {
      if (packet.inFlight) this.congestion.acked(packet);
      for (const item of packet.items) if (item.kind === 'stream') this.streamPieceAcked(item);
    }
    this.detectLoss(space, now);
    this.ptoCount = 0;
    this.unansweredSince = SPACES.some((name) => this.spaces[name].sent.ackElicitingInFlight > 0) ? now : Infinity;
  }

  private detectLoss(space: PacketSpace, now: number): void {
    const lost = space.sent.detectLost(now, this.rtt);
    if (lost.length === 0) return;
    this.packetsLost += lost.length;
    this.requeue(space, lost);
    const inFlight = lost.filter((packet) => packet.inFlight);
    if (inFlight.length > 0) this.congestion.lost(inFlight, now, isPersistentCongestion(inFlight, this.rtt, this.peer?.maxAckDelay ?? 25));
  }

  /** What lost packets carried goes out again (RFC 9000 §13.3): data and control frames, never ACKs or PINGs. */
  private requeue(space: PacketSpace, packets: readonly SentPacket[]): void {
    for (const packet of packets) {
      for (const item of packet.items) {
        if (item.kind === 'crypto') space.cryptoOut.markLost(item.offset, item.length);
        else if (item.kind === 'stream') this.streamPieceLost(item);
        // PATH_RESPONSE is never sent again (RFC 9000 §13.3): the peer challenges anew if it still wants one.
        else if (item.kind === 'control' && item.frame[0] !== 0x1b) this.controls.push(item.frame);
      }
    }
  }

  protected applyTls(output: TlsOutput, now: number): void {
    for (const secrets of output.secrets) {
      const space = this.spaces[secrets.level];
      const [send, receive] = this.role === 'client' ? [secrets.client, secrets.server] : [secrets.server, secrets.client];
      space.sendKeys = new PacketKeys(send);
      space.recvKeys = new PacketKeys(receive);
    }
    for (const { level, data } of output.send) this.spaces[level].cryptoOut.push(data);
    if (output.complete !== undefined) this.handshakeComplete(output.complete, now);
  }

  /** The peer's transport parameters, once checked: idle time-out and reset token taken. */
  protected adoptPeerParameters(peer: TransportParameters): void {
    this.peer = peer;
    this.peerResetToken = peer.statelessResetToken;
    const local = this.localIdleMs;
    this.idleMs = peer.maxIdleTimeout === 0 ? local : local === 0 ? peer.maxIdleTimeout : Math.min(local, peer.maxIdleTimeout);
  }

  /** RFC 9001 §4.9: Initial keys go with the first Handshake packet, Handshake keys when the handshake is confirmed. */
  protected discard(name: 'initial' | 'handshake'): void {
    const space = this.spaces[name];
    if (space.discarded) return;
    space.discarded = true;
    space.sendKeys = null;
    space.recvKeys = null;
    for (const packet of space.sent.clear()) if (packet.inFlight) this.congestion.removed(packet.size);
    this.ptoCount = 0;
  }

  // ---- datagrams out ----

  /** The next datagram to send, or null when there is nothing to send now. */
  poll(now: number): Buffer | null {
    if (this.state === 'draining' || this.state === 'closed') return null;
    this.updateKeysIfDue();
    const send = this.sendContext();
    if (send.allowance < MIN_INITIAL_DATAGRAM && this.role === 'server') return null;
    const context: AssemblyContext = {
      now,
      spaces: this.spaces,
      dcid: this.dcid,
      scid: this.scid,
      token: this.token,
      keyPhase: this.keyPhase,
      maxDatagram: Math.min(this.maxDatagram, send.allowance),
      padInitial: MIN_INITIAL_DATAGRAM,
      padOnlyAckEliciting: this.role === 'server',
      congestion: this.congestion,
      streams: this.state === 'established' ? send.streams : undefined,
      controls: this.state === 'established' ? this.controls : [],
      ackDelayExponent: ACK_DELAY_EXPONENT,
      ping: this.state === 'established' && this.keepAliveMs > 0 && now - this.lastSent >= this.keepAliveMs,
      close: undefined,
    };
    if (this.state === 'closing') {
      if (!this.closeDue) return null;
      this.closeDue = false;
      return assemble({ ...context, streams: undefined, controls: [], close: this.closeFrame })?.datagram ?? null;
    }
    const built = assemble(context);
    if (built === null) return null;
    for (const packet of built.packets) {
      // A packet that is neither ack-eliciting nor in flight (an ACK alone) needs no recovery: a
      // peer that never acknowledges must not make us keep every one.
      if (packet.sent.ackEliciting || packet.sent.inFlight) this.spaces[packet.space].sent.add(packet.sent);
      if (packet.sent.inFlight) this.congestion.sent(packet.sent.size);
      this.packetsSent++;
    }
    this.lastSent = now;
    if (this.unansweredSince === Infinity && built.packets.some((packet) => packet.sent.ackEliciting)) this.unansweredSince = now;
    // The idle timer restarts with the first ack-eliciting packet sent after one was received, not with every one (RFC 9000 §10.1).
    if (built.packets.some((packet) => packet.sent.ackEliciting) && this.lastActivity <= this.lastReceived) this.lastActivity = now;
    this.sentDatagram(built);
    return built.datagram;
  }

  // ---- time ----

  /** When `onTimeout` must be called next (Infinity: nothing pending). */
  nextTimeout(): number {
    if (this.state === 'closed') return Infinity;
    if (this.state === 'closing' || this.state === 'draining') return this.closeUntil;
    let next = Math.min(this.lossTimer(), this.idleDeadline(), this.unansweredDeadline());
    // A deadline for something that cannot be sent now would only spin: an ACK while the
    // anti-amplification limit is reached (more bytes from the peer lift it), a keep-alive
    // while the congestion window is full (an acknowledgement or the loss timer frees it).
    if (this.sendContext().allowance >= MIN_INITIAL_DATAGRAM)
      for (const name of SPACES) {
        const space = this.spaces[name];
        if (!space.discarded && space.sendKeys !== null) next = Math.min(next, space.acks.deadline());
      }
    if (this.state === 'established' && this.keepAliveMs > 0 && this.congestion.canSend(this.maxDatagram))
      next = Math.min(next, this.lastSent + this.keepAliveMs);
    return next;
  }

  private idleDeadline(): number {
    if (this.idleMs === 0) return Infinity;
    // At least three probe time-outs, so that a slow path is not mistaken for an idle one (RFC 9000 §10.1).
    return Math.max(this.lastReceived, this.lastActivity) + Math.max(this.idleMs, 3 * this.ptoDuration('application'));
  }

  private unansweredDeadline(): number {
    if (this.unansweredMs === 0 || this.state !== 'established' || this.unansweredSince === Infinity) return Infinity;
    return this.unansweredSince + Math.max(this.unansweredMs, 3 * this.ptoDuration('application'));
  }

  private ptoDuration(name: SpaceName): number {
    return this.rtt.pto() + (name === 'application' ? (this.peer?.maxAckDelay ?? 25) : 0);
  }

  /** RFC 9002 §6.2.1 and Appendix A.8. */
  private lossTimer(): number {
    let earliest = Infinity;
    for (const name of SPACES) earliest = Math.min(earliest, this.spaces[name].sent.lossTime);
    if (earliest !== Infinity) return earliest;
    const backoff = 2 ** this.ptoCount;
    if (!SPACES.some((name) => this.spaces[name].sent.ackElicitingInFlight > 0)) {
      // A client arms the probe time-out until the handshake is confirmed, so that a lost server flight cannot deadlock it.
      if (this.role === 'server' || this.handshakeConfirmed) return Infinity;
      return this.lastSent + this.ptoDuration('initial') * backoff;
    }
    let pto = Infinity;
    for (const name of SPACES) {
      const space = this.spaces[name];
      if (space.sent.ackElicitingInFlight === 0 || space.discarded) continue;
      if (name === 'application' && this.state !== 'established') continue;
      pto = Math.min(pto, space.sent.lastAckElicitingTime + this.ptoDuration(name) * backoff);
    }
    return pto;
  }

  onTimeout(now: number): void {
    if (this.state === 'closed') return;
    if (this.state === 'closing' || this.state === 'draining') {
      if (now >= this.closeUntil) this.state = 'closed';
      return;
    }
    if (now >= this.idleDeadline()) return this.finish('idle', 0, false, `idle for ${this.idleMs} ms`, now, false);
    if (now >= this.unansweredDeadline())
      return this.finish('idle', 0, false, `nothing acknowledged for ${Math.round(now - this.unansweredSince)} ms`, now, false);
    if (now < this.lossTimer()) return;
    for (const name of SPACES) {
      const space = this.spaces[name];
      if (space.sent.lossTime <= now) return this.detectLoss(space, now);
    }
    // A probe time-out: one or two ack-eliciting packets in the space that timed out (RFC 9002 §6.2.4).
    this.ptoCount++;
    const probing = SPACES.find((name) => this.spaces[name].sent.ackElicitingInFlight > 0 && !this.spaces[name].discarded);
    const name = probing ?? (this.spaces.handshake.sendKeys !== null && !this.spaces.handshake.discarded ? 'handshake' : 'initial');
    const space = this.spaces[name];
    if (space.discarded || space.sendKeys === null) return;
    space.probes = 2;
    if (name !== 'application') space.cryptoOut.resendAll();
  }

  // ---- closing ----

  private enterClosing(frame: CloseFrame, now: number): void {
    // Before 1-RTT keys the close goes in Initial/Handshake packets, where only the transport form exists (RFC 9000 §10.2.3).
    this.closeFrame =
      this.spaces.application.sendKeys === null && frame.application
        ? { application: false, code: 0x0c, frameType: 0, reason: frame.reason }
        : frame;
    this.closeDue = true;
    this.finish('local', frame.code, frame.application, frame.reason, now, false);
  }

  protected finish(
    by: 'local' | 'peer' | 'idle' | 'reset',
    code: number,
    application: boolean,
    reason: string,
    now: number,
    draining: boolean,
  ): void {
    this.events.push({ type: 'closed', by, code, application, reason, undelivered: this.undelivered() });
    if (by === 'idle' || by === 'reset') {
      this.state = 'closed';
      return;
    }
    this.state = draining ? 'draining' : 'closing';
    this.closeUntil = now + 3 * this.ptoDuration('application');
  }
}
