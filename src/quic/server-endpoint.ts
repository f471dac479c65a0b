/**
 * A QUIC server on one `node:dgram` socket, as a TPU listens: a new connection only from a
 * client Initial of at least 1,200 bytes, optionally after a Retry that proves the client's
 * address (the token is ours, sealed with a key that lives only in this process, and
 * expires), datagrams routed by connection ID, connections per identity limited (Agave
 * closes the excess with code 4), and each whole transaction handed to `onTransaction` with
 * the identity that sent it. Nothing a peer sends may end the process: a datagram that does
 * not parse is dropped.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { ConnectionEvent } from './connection';
import { DeadlineTimer } from './deadline-timer';
import { decodePacketNumber, initialSecrets, PacketKeys, retryIntegrityTag, unprotectHeader } from './packet-protection';
import { MAX_CID_LENGTH, retryWithoutTag, splitDatagram } from './packets';
import { QuicServerConnection, type ServerOptions } from './server-connection';
import type { TlsSession } from './tls-session';

export interface ServerEndpointOptions {
  readonly host: string;
  readonly port: number;
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
    code?: number;
    reason?: string;
  }) => void;
  /** Refuses a new connection (fault injection, or a limit): a reason closes it at once with CONNECTION_REFUSED. */
  readonly admit?: (remote: string) => string | null;
  /** Connections one address may have in the handshake at once (default 64); more Initials are dropped. */
  readonly maxHandshakesPerAddress?: number;
  /** Connections in all (default 8,192); more Initials are dropped. */
  readonly maxConnections?: number;
}

const TOKEN_LIFETIME_MS = 10_000;
/** Agave's close code for too many connections from one peer. */
export const TOO_MANY_CONNECTIONS_CODE = 4;
const SCID_LENGTH = 8;

const now = () => performance.now();

/** Whether the Initial packet at the start of a datagram decrypts with the keys its destination ID gives. */
function opensAsInitial(dcid: Buffer, packet: Buffer, pnOffset: number): boolean {
  const keys = new PacketKeys(initialSecrets(dcid).client);
  const unprotected = unprotectHeader(keys, packet, pnOffset);
  if (unprotected === null) return false;
  const packetNumber = decodePacketNumber(-1, unprotected.truncated, unprotected.pnLength);
  return keys.open(unprotected.header, packet.subarray(unprotected.header.length), packetNumber) !== null;
}

export class QuicServerEndpoint {
  private readonly byCid = new Map<string, QuicServerConnection>();
  private readonly remotes = new Map<QuicServerConnection, { address: string; port: number }>();
  private readonly byIdentity = new Map<string, Set<QuicServerConnection>>();
  private readonly dirty = new Set<QuicServerConnection>();
  private readonly tokenKey = randomBytes(16);
  private flushScheduled = false;
  private readonly timer = new DeadlineTimer(() => this.onTimer());
  /** Set to drop every datagram of established connections (fault injection: a stalled leader). */
  stalled = false;

  private constructor(
    private readonly socket: dgram.Socket,
    private readonly options: ServerEndpointOptions,
  ) {
    socket.on('message', (datagram, remote) => this.onMessage(datagram, remote.address, remote.port));
    socket.on('error', () => {});
  }

  static async open(options: ServerEndpointOptions): Promise<QuicServerEndpoint> {
    const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024, sendBufferSize: 8 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(options.port, options.host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new QuicServerEndpoint(socket, options);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /**
   * Asks `streamWindow` again for every established connection: one that grew is given the
   * credit at once; one set to 0 is given no more once what it holds is used (credit given
   * in QUIC cannot be taken back).
   */
  renewStreamWindows(): void {
    for (const connection of this.remotes.keys()) if (connection.renewStreamWindow()) this.markDirty(connection);
  }

  get connectionCount(): number {
    return this.remotes.size;
  }

  private onMessage(datagram: Buffer, address: string, port: number): void {
    if (datagram.length === 0) return;
    const long = (datagram[0]! & 0x80) !== 0;
    const cid = long ? datagram.subarray(6, 6 + Math.min(datagram[5] ?? 0, MAX_CID_LENGTH)) : datagram.subarray(1, 1 + SCID_LENGTH);
    const existing = this.byCid.get(cid.toString('hex'));
    if (existing !== undefined) {
      if (this.stalled && existing.state === 'established') return;
      existing.receive(datagram, now());
      this.markDirty(existing);
      return;
    }
    if (long && datagram.length >= 1200) this.accept(datagram, address, port);
  }

  private accept(datagram: Buffer, address: string, port: number): void {
    const [first] = splitDatagram(datagram, SCID_LENGTH);
    if (first === undefined || first.type !== 'initial' || first.dcid.length < 8) return;
    // Nothing is kept, and nothing sent back, for an Initial that does not decrypt (RFC 9000 §21.6).
    if (!opensAsInitial(first.dcid, first.packet, first.pnOffset)) return;
    if (this.remotes.size >= (this.options.maxConnections ?? 8_192)) return;
    let handshaking = 0;
    for (const [connection, remote] of this.remotes) if (remote.address === address && connection.state === 'handshaking') handshaking++;
    if (handshaking >= (this.options.maxHandshakesPerAddress ?? 64)) return;
    let originalDcid = first.dcid;
    let retrySource: Buffer | undefined;
    if (this.options.retry) {
      if (first.token.length === 0) return this.sendRetry(first.dcid, first.scid, address, port);
      const proven = this.openToken(first.token, address, port);
      if (proven === null) return;
      originalDcid = proven;
      retrySource = first.dcid;
    }
    const remote = `${address}:${port}`;
    const refused = this.options.admit?.(remote) ?? null;
    const connection = new QuicServerConnection({
      now: now(),
      clientDcid: Buffer.from(first.dcid),
      clientScid: Buffer.from(first.scid),
      originalDcid: Buffer.from(originalDcid),
      retrySource: retrySource === undefined ? undefined : Buffer.from(retrySource),
      scid: randomBytes(SCID_LENGTH),
      statelessResetToken: randomBytes(16),
      addressValidated: retrySource !== undefined,
      tls: this.options.tls,
      maxStreamBytes: this.options.maxStreamBytes,
      streamWindow: this.options.streamWindow,
      idleTimeoutMs: this.options.idleTimeoutMs,
    });
    this.byCid.set(connection.scid.toString('hex'), connection);
    this.byCid.set(connection.clientDcid.toString('hex'), connection);
    this.remotes.set(connection, { address, port });
    connection.receive(datagram, now());
    if (refused !== null) connection.refuse(refused, now());
    this.markDirty(connection);
  }

  /** A Retry whose token seals the client's address, the time and its original destination ID. */
  private sendRetry(dcid: Buffer, scid: Buffer, address: string, port: number): void {
    const plain = Buffer.alloc(8 + dcid.length);
    plain.writeDoubleBE(Date.now(), 0);
    dcid.copy(plain, 8);
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-128-gcm', this.tokenKey, nonce);
    cipher.setAAD(Buffer.from(`${address}:${port}`));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    const token = Buffer.concat([nonce, sealed, cipher.getAuthTag()]);
    const retryScid = randomBytes(SCID_LENGTH);
    const packet = retryWithoutTag(scid, retryScid, token);
    this.socket.send(Buffer.concat([packet, retryIntegrityTag(dcid, packet)]), port, address);
  }

  /** The original destination ID a valid, unexpired token of ours proves for this address; null otherwise. */
  private openToken(token: Buffer, address: string, port: number): Buffer | null {
    if (token.length < 12 + 8 + 8 + 16) return null;
    try {
      const decipher = createDecipheriv('aes-128-gcm', this.tokenKey, token.subarray(0, 12));
      decipher.setAAD(Buffer.from(`${address}:${port}`));
      decipher.setAuthTag(token.subarray(token.length - 16));
      const plain = Buffer.concat([decipher.update(token.subarray(12, token.length - 16)), decipher.final()]);
      const age = Date.now() - plain.readDoubleBE(0);
      if (age < 0 || age > TOKEN_LIFETIME_MS) return null;
      return plain.subarray(8);
    } catch {
      return null;
    }
  }

  private markDirty(connection: QuicServerConnection): void {
    this.dirty.add(connection);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const time = now();
    for (const connection of this.dirty) this.drive(connection, time);
    this.dirty.clear();
    this.armTimer();
  }

  private drive(connection: QuicServerConnection, time: number): void {
    const remote = this.remotes.get(connection);
    if (remote === undefined) return;
    for (const event of connection.takeEvents()) this.onEvent(connection, event, remote, time);
    for (let datagram = connection.poll(time); datagram !== null; datagram = connection.poll(time))
      this.socket.send(datagram, remote.port, remote.address);
    if (connection.state === 'closed') this.forget(connection);
  }

  private onEvent(
    connection: QuicServerConnection,
    event: ConnectionEvent<never>,
    remote: { address: string; port: number },
    time: number,
  ): void {
    const where = `${remote.address}:${remote.port}`;
    if (event.type === 'stream') {
      this.options.onTransaction(event.data, connection.peerIdentity, where);
    } else if (event.type === 'established') {
      const key = event.peerIdentity?.toString('hex') ?? '';
      const held = this.byIdentity.get(key) ?? new Set();
      held.add(connection);
      this.byIdentity.set(key, held);
      if (held.size > this.options.maxConnectionsPerIdentity(event.peerIdentity)) {
        connection.close(TOO_MANY_CONNECTIONS_CODE, 'too many connections from this identity', time);
        return;
      }
      this.options.onConnection?.({ identity: event.peerIdentity, remote: where, state: 'established' });
    } else if (event.type === 'closed') {
      this.options.onConnection?.({
        identity: connection.peerIdentity,
        remote: where,
        state: 'closed',
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

  private armTimer(): void {
    let next = Infinity;
    for (const connection of this.remotes.keys()) next = Math.min(next, connection.nextTimeout());
    this.timer.arm(next);
  }

  private onTimer(): void {
    const time = now();
    for (const connection of this.remotes.keys()) {
      if (connection.nextTimeout() <= time) {
        connection.onTimeout(time);
        this.dirty.add(connection);
      }
    }
    this.flush();
  }

  async close(): Promise<void> {
    const time = now();
    for (const connection of this.remotes.keys()) {
      connection.close(0, 'server closing', time);
      this.drive(connection, time);
    }
    this.timer.clear();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}
