/**
 * A QUIC server listening on one UDP port, as a TPU listens: the endpoint without I/O
 * (server-endpoint-machine.ts: routing, Retry, limits) driven on a `node:dgram` socket by
 * udp-driver.ts.
 */
import { UdpDriver } from './udp-driver';
import { ServerEndpointMachine, type ServerMachineOptions } from './server-endpoint-machine';

export { TOO_MANY_CONNECTIONS_CODE } from './server-endpoint-machine';

export interface ServerEndpointOptions extends ServerMachineOptions {
  readonly host: string;
  readonly port: number;
}

export class QuicServerEndpoint {
  private constructor(private readonly driver: UdpDriver<ServerEndpointMachine>) {}

  static async open(options: ServerEndpointOptions): Promise<QuicServerEndpoint> {
    return new QuicServerEndpoint(await UdpDriver.bind(options.host, options.port, new ServerEndpointMachine(options)));
  }

  get port(): number {
    return this.driver.port;
  }

  get connectionCount(): number {
    return this.driver.machine.connectionCount;
  }

  /** Set to drop every datagram of established connections (fault injection: a stalled leader). */
  get stalled(): boolean {
    return this.driver.machine.stalled;
  }

  set stalled(value: boolean) {
    this.driver.machine.stalled = value;
  }

  /** See ServerEndpointMachine.renewStreamWindows: the MAX_STREAMS it owes go out this turn. */
  renewStreamWindows(): void {
    this.driver.act(() => this.driver.machine.renewStreamWindows());
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}
