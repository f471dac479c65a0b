/**
 * The one place QUIC meets I/O: a `node:dgram` socket shared by every client connection of
 * the process, datagrams routed to connections by the connection ID we issued, one timer for
 * all of them, and sends flushed once per turn of the event loop so that transactions queued
 * together share packets. The connections themselves (connection.ts) never touch a socket.
 */
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { QuicClientConnection, type ClientOptions } from './client-connection';
import type { ConnectionEvent } from './connection';
import { DeadlineTimer } from './deadline-timer';

export interface EndpointConnection<T> {
  readonly connection: QuicClientConnection<T>;
  readonly address: string;
  readonly port: number;
}

export interface ClientEndpointOptions {
  /** Where the socket binds (default: an ephemeral port on all IPv4 addresses). */
  readonly bindAddress?: string;
  readonly bindPort?: number;
}

/** Datagrams read per connection before its answers are flushed: a flood cannot starve the loop of sends. */
const now = () => performance.now();

export class QuicClientEndpoint {
  private readonly socket: dgram.Socket;
  private readonly byCid = new Map<string, EndpointConnection<unknown> & { onEvents: (events: ConnectionEvent<unknown>[]) => void }>();
  private readonly dirty = new Set<EndpointConnection<unknown> & { onEvents: (events: ConnectionEvent<unknown>[]) => void }>();
  private flushScheduled = false;
  private readonly timer = new DeadlineTimer(() => this.onTimer());
  private closed = false;
  /** Datagrams and bytes sent, for the benchmark. */
  datagramsSent = 0;
  datagramsReceived = 0;

  private constructor(socket: dgram.Socket) {
    this.socket = socket;
    socket.on('message', (datagram) => this.onMessage(datagram));
    // A send to a closed port comes back as an ICMP error on some systems: the connection's timers handle it.
    socket.on('error', () => {});
  }

  static async open(options: ClientEndpointOptions = {}): Promise<QuicClientEndpoint> {
    const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024, sendBufferSize: 8 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(options.bindPort ?? 0, options.bindAddress ?? '0.0.0.0', () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new QuicClientEndpoint(socket);
  }

  /** The same, at once: the socket binds in the background (sends before it has are queued by Node). */
  static create(options: ClientEndpointOptions = {}): QuicClientEndpoint {
    const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024, sendBufferSize: 8 * 1024 * 1024 });
    socket.bind(options.bindPort ?? 0, options.bindAddress ?? '0.0.0.0');
    return new QuicClientEndpoint(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Starts a connection to `address:port`; its events go to `onEvents` as they happen. */
  connect<T>(
    address: string,
    port: number,
    options: Omit<ClientOptions, 'now'>,
    onEvents: (events: ConnectionEvent<T>[]) => void,
  ): EndpointConnection<T> {
    if (this.closed) throw new Error('the QUIC endpoint is closed');
    const connection = new QuicClientConnection<T>({ ...options, now: now() });
    const entry = { connection, address, port, onEvents: onEvents as (events: ConnectionEvent<unknown>[]) => void };
    this.byCid.set(connection.scid.toString('hex'), entry as never);
    this.markDirty(entry as never);
    return entry;
  }

  /** Queues `data` on `entry`'s connection; false if it cannot take it. Sent at the end of this turn. */
  send<T>(entry: EndpointConnection<T>, data: Buffer, tag: T): boolean {
    const accepted = entry.connection.send(data, tag);
    if (accepted) this.markDirty(entry as never);
    return accepted;
  }

  closeConnection<T>(entry: EndpointConnection<T>, code = 0, reason = ''): void {
    entry.connection.close(code, reason, now());
    this.markDirty(entry as never);
  }

  private markDirty(entry: EndpointConnection<unknown> & { onEvents: (events: ConnectionEvent<unknown>[]) => void }): void {
    this.dirty.add(entry);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private onMessage(datagram: Buffer): void {
    this.datagramsReceived++;
    // Our connection IDs are 8 bytes: in a short header they follow the first byte, in a long one the length byte.
    const long = (datagram[0]! & 0x80) !== 0;
    const cid = long ? datagram.subarray(6, 6 + Math.min(datagram[5] ?? 0, 20)) : datagram.subarray(1, 9);
    const entry = this.byCid.get(cid.toString('hex'));
    if (entry === undefined) return;
    entry.connection.receive(datagram, now());
    this.markDirty(entry);
  }

  private flush(): void {
    this.flushScheduled = false;
    const time = now();
    for (const entry of this.dirty) this.drive(entry, time);
    this.dirty.clear();
    this.armTimer();
  }

  private drive(entry: EndpointConnection<unknown> & { onEvents: (events: ConnectionEvent<unknown>[]) => void }, time: number): void {
    const { connection } = entry;
    for (let datagram = connection.poll(time); datagram !== null; datagram = connection.poll(time)) {
      this.socket.send(datagram, entry.port, entry.address);
      this.datagramsSent++;
    }
    const events = connection.takeEvents();
    if (connection.state === 'closed') this.byCid.delete(connection.scid.toString('hex'));
    if (events.length > 0) entry.onEvents(events);
  }

  private armTimer(): void {
    let next = Infinity;
    for (const entry of this.byCid.values()) next = Math.min(next, entry.connection.nextTimeout());
    this.timer.arm(next);
  }

  private onTimer(): void {
    const time = now();
    for (const entry of [...this.byCid.values()]) {
      if (entry.connection.nextTimeout() <= time) {
        entry.connection.onTimeout(time);
        this.dirty.add(entry);
      }
    }
    this.flush();
  }

  /** Closes every connection (their CONNECTION_CLOSE sent) and then the socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const time = now();
    for (const entry of this.byCid.values()) {
      entry.connection.close(0, 'endpoint closed', time);
      this.drive(entry, time);
    }
    this.byCid.clear();
    this.timer.clear();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}
