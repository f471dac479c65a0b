/**
 * The QUIC client endpoint of the process: every client connection on one `node:dgram`
 * socket, the endpoint without I/O (client-endpoint-machine.ts) driven by udp-driver.ts,
 * which owns the socket and the timer. The connections themselves never touch a socket.
 */
import type { ClientOptions } from './client-connection';
import { ClientEndpointMachine, type EndpointConnection } from './client-endpoint-machine';
import type { ConnectionEvent } from './connection';
import { UdpDriver } from './udp-driver';

export type { EndpointConnection } from './client-endpoint-machine';

export interface ClientEndpointOptions {
  /** Where the socket binds (default: an ephemeral port on all IPv4 addresses). */
  readonly bindAddress?: string;
  readonly bindPort?: number;
}

export class QuicClientEndpoint {
  private constructor(private readonly driver: UdpDriver<ClientEndpointMachine>) {}

  static async open(options: ClientEndpointOptions = {}): Promise<QuicClientEndpoint> {
    return new QuicClientEndpoint(
      await UdpDriver.bind(options.bindAddress ?? '0.0.0.0', options.bindPort ?? 0, new ClientEndpointMachine()),
    );
  }

  /** The same, at once: the socket binds in the background (sends before it has are queued by Node). */
  static create(options: ClientEndpointOptions = {}): QuicClientEndpoint {
    return new QuicClientEndpoint(
      UdpDriver.bindLater(options.bindAddress ?? '0.0.0.0', options.bindPort ?? 0, new ClientEndpointMachine()),
    );
  }

  get port(): number {
    return this.driver.port;
  }

  /** Datagrams sent and received, for the benchmark. */
  get datagramsSent(): number {
    return this.driver.machine.datagramsSent;
  }

  get datagramsReceived(): number {
    return this.driver.machine.datagramsReceived;
  }

  /** Starts a connection to `address:port`; its events go to `onEvents` as they happen. Throws once the endpoint is closed. */
  connect<T>(
    address: string,
    port: number,
    options: Omit<ClientOptions, 'now'>,
    onEvents: (events: ConnectionEvent<T>[]) => void,
  ): EndpointConnection<T> {
    return this.driver.act((now) => this.driver.machine.connect(now, address, port, options, onEvents));
  }

  /** Queues `data` on `entry`'s connection; false if it cannot take it. Sent at the end of this turn. */
  send<T>(entry: EndpointConnection<T>, data: Buffer, tag: T): boolean {
    return this.driver.act(() => this.driver.machine.send(entry, data, tag));
  }

  closeConnection<T>(entry: EndpointConnection<T>, code = 0, reason = ''): void {
    this.driver.act((now) => this.driver.machine.closeConnection(entry, now, code, reason));
  }

  /** Closes every connection (their CONNECTION_CLOSE sent) and then the socket. */
  close(): Promise<void> {
    return this.driver.close();
  }
}
