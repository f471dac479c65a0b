/**
 * The client side of a QUIC endpoint as a state machine without I/O: every client
 * connection of the process on one socket, a datagram routed to its connection by the
 * connection ID we issued, and what the connections send handed out through `pollTransmit`,
 * so that transactions queued in the same turn share packets. The events of a connection go
 * to the `onEvents` it was started with, when it is next polled. udp-driver.ts owns the
 * socket and the timer.
 */
import { QuicClientConnection, type ClientOptions } from './client-connection';
import type { ConnectionEvent } from './connection';
import { destinationCid, TransmitQueue, type EndpointMachine, type Remote, type Transmit } from './endpoint-machine';

/** A connection of the endpoint, and where it sends. */
export interface EndpointConnection<T> extends Remote {
  readonly connection: QuicClientConnection<T>;
}

interface Entry extends EndpointConnection<unknown> {
  readonly onEvents: (events: ConnectionEvent<unknown>[]) => void;
}

/** The length of the connection IDs our client connections choose (client-connection.ts). */
const SCID_LENGTH = 8;

export class ClientEndpointMachine implements EndpointMachine {
  private readonly byCid = new Map<string, Entry>();
  private readonly transmits = new TransmitQueue<Entry>((entry, now) => this.drive(entry, now));
  private closed = false;
  /** Datagrams handed out and taken in, for the benchmark. */
  datagramsSent = 0;
  datagramsReceived = 0;

  /** Starts a connection to `address:port`; its events go to `onEvents` as they happen. */
  connect<T>(
    now: number,
    address: string,
    port: number,
    options: Omit<ClientOptions, 'now'>,
    onEvents: (events: ConnectionEvent<T>[]) => void,
  ): EndpointConnection<T> {
    if (this.closed) throw new Error('the QUIC endpoint is closed');
    const connection = new QuicClientConnection<T>({ ...options, now });
    const entry: Entry = { connection, address, port, onEvents: onEvents as Entry['onEvents'] };
    this.byCid.set(connection.scid.toString('hex'), entry);
    this.transmits.touch(entry);
    return entry as EndpointConnection<unknown> as EndpointConnection<T>;
  }

  /** Queues `data` on `entry`'s connection; false if it cannot take it. Sent when the endpoint is next polled. */
  send<T>(entry: EndpointConnection<T>, data: Buffer, tag: T): boolean {
    const accepted = entry.connection.send(data, tag);
    if (accepted) this.transmits.touch(entry as EndpointConnection<unknown> as Entry);
    return accepted;
  }

  closeConnection<T>(entry: EndpointConnection<T>, now: number, code = 0, reason = ''): void {
    entry.connection.close(code, reason, now);
    this.transmits.touch(entry as EndpointConnection<unknown> as Entry);
  }

  handle(now: number, _remote: Remote, datagram: Buffer): void {
    this.datagramsReceived++;
    if (datagram.length === 0) return;
    const entry = this.byCid.get(destinationCid(datagram, SCID_LENGTH).toString('hex'));
    if (entry === undefined) return;
    entry.connection.receive(datagram, now);
    this.transmits.touch(entry);
  }

  pollTransmit(now: number): Transmit | null {
    const transmit = this.transmits.poll(now);
    if (transmit !== null) this.datagramsSent++;
    return transmit;
  }

  private drive(entry: Entry, now: number): void {
    const { connection } = entry;
    for (let datagram = connection.poll(now); datagram !== null; datagram = connection.poll(now))
      this.transmits.push({ address: entry.address, port: entry.port, datagram });
    const events = connection.takeEvents();
    if (connection.state === 'closed') this.byCid.delete(connection.scid.toString('hex'));
    if (events.length > 0) entry.onEvents(events);
  }

  nextTimeout(): number {
    let next = Infinity;
    for (const entry of this.byCid.values()) next = Math.min(next, entry.connection.nextTimeout());
    return next;
  }

  onTimeout(now: number): void {
    for (const entry of [...this.byCid.values()]) {
      if (entry.connection.nextTimeout() <= now) {
        entry.connection.onTimeout(now);
        this.transmits.touch(entry);
      }
    }
  }

  /** Closes every connection; their CONNECTION_CLOSE is polled next, and nothing more is started. */
  close(now: number): void {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.byCid.values()) {
      entry.connection.close(0, 'endpoint closed', now);
      this.transmits.touch(entry);
    }
  }
}
