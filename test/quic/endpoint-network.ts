/**
 * A client endpoint and a server endpoint without I/O (client-endpoint-machine.ts,
 * server-endpoint-machine.ts) wired to each other in memory, with a clock the test moves:
 * what one side polls is handed to the other at the same time, from the address the test
 * gave it. The tests of the endpoints and the QUIC fuzz use it; no socket is involved.
 */
import { ClientEndpointMachine } from '../../src/quic/client-endpoint-machine';
import type { Remote, Transmit } from '../../src/quic/endpoint-machine';
import { ServerEndpointMachine, type ServerMachineOptions } from '../../src/quic/server-endpoint-machine';
import { serverTls, type TlsIdentity } from '../../src/quic/tpu-handshakes';

export const SERVER: Remote = { address: '10.0.0.1', port: 8009 };
export const CLIENT: Remote = { address: '10.0.0.2', port: 40_000 };

export interface EndpointNetwork {
  readonly client: ClientEndpointMachine;
  readonly server: ServerEndpointMachine;
  readonly clock: { now: number };
  /** Transactions the server took, with who sent them. */
  readonly received: { data: Buffer; identity: Buffer | undefined; remote: string }[];
  /** What the server sent, per address it was sent to (a Retry, or a connection's datagrams). */
  readonly serverSent: Transmit[];
  /** Delivers both ways until neither side has anything to send; `rewrite` may replace or drop (null) what the client sends. */
  pump(rewrite?: (datagram: Buffer) => Buffer | null): void;
  /** Moves the clock to the next deadline of either side (at most `limit`) and fires it. */
  tick(limit?: number): void;
}

export function endpointNetwork(serverIdentity: TlsIdentity, options: Partial<ServerMachineOptions> = {}): EndpointNetwork {
  const clock = { now: 1_000 };
  const received: EndpointNetwork['received'] = [];
  const serverSent: Transmit[] = [];
  const client = new ClientEndpointMachine();
  const server = new ServerEndpointMachine({
    tls: serverTls(serverIdentity),
    maxStreamBytes: 1232,
    streamWindow: () => 128,
    maxConnectionsPerIdentity: () => 8,
    retry: false,
    idleTimeoutMs: 5_000,
    onTransaction: (data, identity, remote) => received.push({ data, identity, remote }),
    ...options,
  });
  const pump: EndpointNetwork['pump'] = (rewrite) => {
    for (let round = 0; round < 200; round++) {
      let moved = false;
      for (let out = client.pollTransmit(clock.now); out !== null; out = client.pollTransmit(clock.now)) {
        moved = true;
        const datagram = rewrite === undefined ? out.datagram : rewrite(out.datagram);
        if (datagram !== null && out.address === SERVER.address && out.port === SERVER.port) server.handle(clock.now, CLIENT, datagram);
      }
      for (let out = server.pollTransmit(clock.now); out !== null; out = server.pollTransmit(clock.now)) {
        moved = true;
        serverSent.push(out);
        if (out.address === CLIENT.address && out.port === CLIENT.port) client.handle(clock.now, SERVER, out.datagram);
      }
      if (!moved) return;
    }
  };
  const tick: EndpointNetwork['tick'] = (limit = Infinity) => {
    clock.now = Math.max(clock.now + 1, Math.min(client.nextTimeout(), server.nextTimeout(), limit));
    client.onTimeout(clock.now);
    server.onTimeout(clock.now);
    pump();
  };
  return { client, server, clock, received, serverSent, pump, tick };
}
