/**
 * A QUIC server endpoint as a state machine without I/O, as a TPU listens (the shape of
 * quinn-proto's `Endpoint`): a datagram is routed to its connection by destination ID; a
 * new connection starts only from a client Initial of at least 1,200 bytes that decrypts,
 * optionally after a Retry that proves the client's address (retry-tokens.ts, judged at the
 * `now` given); connections in the handshake are limited per address and in all, and
 * connections per identity (Agave closes the excess with code 4); each whole transaction
 * goes to `onTransaction` with the identity that sent it. What a connection sends waits in
 * a queue for `pollTransmit`; udp-driver.ts owns the socket and the timer. Nothing a peer
 * sends may throw out of `handle`: a datagram that does not parse is dropped.
 */
import { randomBytes } from 'node:crypto';
import type { ConnectionEvent } from './connection';
import { destinationCid, TransmitQueue, type EndpointMachine, type Remote, type Transmit } from './endpoint-machine';
import { decodePacketNumber, initialSecrets, PacketKeys, retryIntegrityTag, unprotectHeader } from './packet-protection';
import { retryWithoutTag, splitDatagram } from './packets';
import { RetryTokens } from './retry-tokens';
import { QuicServerConnection, type ServerOptions } from './server-connection';
import type { TlsSession } from './tls-session';

export interface ServerMachineOptions {
  readonly tls: (transportParameters: Buffer) => TlsSession;
  readonly maxStreamBytes: number;
  readonly streamWindow: ServerOptions['streamWindow'];
  /** Connections one identity may hold at once (Agave: 8 unstaked, 16 staked); the excess is closed with code 4. */
  readonly maxConnectionsPerIdentity: (identity: Buffer | undefined) => number;
  /** Demand a Retry before any connection (as Firedancer does). */
  readonly retry: boolean;
  readonly idleTimeoutMs: number;
  readonly onTransaction: (data: Buffer, identity: Buffer | undefined, remote: string) => void;
  readonly onConnection?: (event: {
    identity: Buffer | undefined;
    remote: string;
    state: 'established' | 'closed';
    /** Who closed it (see ConnectionEvent): a code the peer sent is its own, not ours. */
    by?: 'local' | 'peer' | 'idle' | 'reset';
    code?: number;
    reason?: string;
  }) => void;
  /** Refuses a new connection (fault injection, or a limit): a reason closes it at once with CONNECTION_REFUSED. */
  readonly admit?: (remote: string) => string | null;
  /** Connections one address may have in the handshake at once (default 64); more Initials are dropped. */
  readonly maxHandshakesPerAddress?: number;
  /** Connections in all (default 8,192); more Initials are dropped. */
  readonly maxConnections?: number;
  /** Connection IDs, reset tokens and the token key (default: node:crypto's); the fuzz makes them reproducible. */
  readonly random?: (length: number) => Buffer;
}

/** Agave's close code for too many connections from one peer. */
export const TOO_MANY_CONNECTIONS_CODE = 4;
const SCID_LENGTH = 8;
/** A client Initial's datagram is at least this long (RFC 9000 §14.1); a shorter one starts nothing. */
const MIN_INITIAL_DATAGRAM = 1200;

/** Whether the Initial packet at the start of a datagram decrypts with the keys its destination ID gives. */
function opensAsInitial(dcid: Buffer, packet: Buffer, pnOffset: number): boolean {
  const keys = new PacketKeys(initialSecrets(dcid).client);
  const unprotected = unprotectHeader(keys, packet, pnOffset);
  if (unprotected === null) return false;
  const packetNumber = decodePacketNumber(-1, unprotected.truncated, unprotected.pnLength);
  return keys.open(unprotected.header, packet.subarray(unprotected.header.length), packetNumber) !== null;
}

export class ServerEndpointMachine implements EndpointMachine {
  private readonly byCid = new Map<string, QuicServerConnection>();
  private readonly remotes = new Map<QuicServerConnection, Remote>();
  private readonly byIdentity = new Map<string, Set<QuicServerConnection>>();
  private readonly tokens: RetryTokens;
  private readonly random: (length: number) => Buffer;
  private readonly transmits = new TransmitQueue<QuicServerConnection>((connection, now) => this.drive(connection, now));
  /** Set to drop every datagram of established connections (fault injection: a stalled leader). */
  stalled = false;

  constructor(private readonly options: ServerMachineOptions) {
    this.random = options.random ?? randomBytes;
    this.tokens = new RetryTokens(this.random);
  }

  get connectionCount(): number {
    return this.remotes.size;
  }

  /**
   * Asks `streamWindow` again for every established connection: one that grew is given the
   * credit at once; one set to 0 is given no more once what it holds is used (credit given
   * in QUIC cannot be taken back).
   */
  renewStreamWindows(): void {
    for (const connection of this.remotes.keys()) if (connection.renewStreamWindow()) this.transmits.touch(connection);
  }

  handle(now: number, remote: Remote, datagram: Buffer): void {
    if (datagram.length === 0) return;
    const existing = this.byCid.get(destinationCid(datagram, SCID_LENGTH).toString('hex'));
    if (existing !== undefined) {
      if (this.stalled && existing.state === 'established') return;
      existing.receive(datagram, now);
      this.transmits.touch(existing);
      return;
    }
    if ((datagram[0]! & 0x80) !== 0 && datagram.length >= MIN_INITIAL_DATAGRAM) this.accept(now, remote, datagram);
  }

  private accept(now: number, remote: Remote, datagram: Buffer): void {
    const [first] = splitDatagram(datagram, SCID_LENGTH);
    if (first === undefined || first.type !== 'initial' || first.dcid.length < 8) return;
    // Nothing is kept, and nothing sent back, for an Initial that does not decrypt (RFC 9000 §21.6).
    if (!opensAsInitial(first.dcid, first.packet, first.pnOffset)) return;
    if (this.remotes.size >= (this.options.maxConnections ?? 8_192)) return;
    let handshaking = 0;
    for (const [connection, from] of this.remotes) if (from.address === remote.address && connection.state === 'handshaking') handshaking++;
    if (handshaking >= (this.options.maxHandshakesPerAddress ?? 64)) return;
    let originalDcid = first.dcid;
    let retrySource: Buffer | undefined;
    if (this.options.retry) {
      if (first.token.length === 0) return this.queueRetry(now, remote, first.dcid, first.scid);
      const proven = this.tokens.open(first.token, remote, now);
      if (proven === null) return;
      originalDcid = proven;
      retrySource = first.dcid;
    }
    const where = `${remote.address}:${remote.port}`;
    const refused = this.options.admit?.(where) ?? null;
    const connection = new QuicServerConnection({
      now,
      clientDcid: Buffer.from(first.dcid),
      clientScid: Buffer.from(first.scid),
      originalDcid: Buffer.from(originalDcid),
      retrySource: retrySource === undefined ? undefined : Buffer.from(retrySource),
      scid: this.random(SCID_LENGTH),
      statelessResetToken: this.random(16),
      addressValidated: retrySource !== undefined,
      tls: this.options.tls,
      maxStreamBytes: this.options.maxStreamBytes,
      streamWindow: this.options.streamWindow,
      idleTimeoutMs: this.options.idleTimeoutMs,
    });
    this.byCid.set(connection.scid.toString('hex'), connection);
    this.byCid.set(connection.clientDcid.toString('hex'), connection);
    this.remotes.set(connection, { address: remote.address, port: remote.port });
    connection.receive(datagram, now);
    if (refused !== null) connection.refuse(refused, now);
    this.transmits.touch(connection);
  }

  /** A Retry whose token seals the client's address, the time and its original destination ID; no state is kept. */
  private queueRetry(now: number, remote: Remote, dcid: Buffer, scid: Buffer): void {
    const token = this.tokens.seal(dcid, remote, now);
    const packet = retryWithoutTag(scid, this.random(SCID_LENGTH), token);
    this.transmits.push({ address: remote.address, port: remote.port, datagram: Buffer.concat([packet, retryIntegrityTag(dcid, packet)]) });
  }

  pollTransmit(now: number): Transmit | null {
    return this.transmits.poll(now);
  }

  private drive(connection: QuicServerConnection, now: number): void {
    const remote = this.remotes.get(connection);
    if (remote === undefined) return;
    for (const event of connection.takeEvents()) this.onEvent(connection, event, remote, now);
    for (let datagram = connection.poll(now); datagram !== null; datagram = connection.poll(now))
      this.transmits.push({ address: remote.address, port: remote.port, datagram });
    if (connection.state === 'closed') this.forget(connection);
  }

  private onEvent(connection: QuicServerConnection, event: ConnectionEvent<never>, remote: Remote, now: number): void {
    const where = `${remote.address}:${remote.port}`;
    if (event.type === 'stream') {
      this.options.onTransaction(event.data, connection.peerIdentity, where);
    } else if (event.type === 'established') {
      const key = event.peerIdentity?.toString('hex') ?? '';
      const held = this.byIdentity.get(key) ?? new Set();
      held.add(connection);
      this.byIdentity.set(key, held);
      if (held.size > this.options.maxConnectionsPerIdentity(event.peerIdentity)) {
        connection.close(TOO_MANY_CONNECTIONS_CODE, 'too many connections from this identity', now);
        return;
      }
      this.options.onConnection?.({ identity: event.peerIdentity, remote: where, state: 'established' });
    } else if (event.type === 'closed') {
      this.options.onConnection?.({
        identity: connection.peerIdentity,
        remote: where,
        state: 'closed',
        by: event.by,
        code: event.code,
        reason: event.reason,
      });
      this.release(connection);
    }
  }

  private forget(connection: QuicServerConnection): void {
    this.byCid.delete(connection.scid.toString('hex'));
    this.byCid.delete(connection.clientDcid.toString('hex'));
    this.remotes.delete(connection);
    this.release(connection);
  }

  /** Counts `connection` out of its identity's; an identity with none left is forgotten. */
  private release(connection: QuicServerConnection): void {
    const key = connection.peerIdentity?.toString('hex') ?? '';
    const held = this.byIdentity.get(key);
    if (held === undefined) return;
    held.delete(connection);
    if (held.size === 0) this.byIdentity.delete(key);
  }

  nextTimeout(): number {
    let next = Infinity;
    for (const connection of this.remotes.keys()) next = Math.min(next, connection.nextTimeout());
    return next;
  }

  onTimeout(now: number): void {
    for (const connection of this.remotes.keys()) {
      if (connection.nextTimeout() <= now) {
        connection.onTimeout(now);
        this.transmits.touch(connection);
      }
    }
  }

  close(now: number): void {
    for (const connection of this.remotes.keys()) {
      connection.close(0, 'server closing', now);
      this.transmits.touch(connection);
    }
  }
}
