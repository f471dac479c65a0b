/**
 * The one place QUIC meets I/O, on both sides: a `node:dgram` socket, the clock and one
 * timer, driving an endpoint that has none of them (endpoint-machine.ts). Datagrams received
 * are handed to the endpoint with the time; what it has to send is flushed once per turn of
 * the event loop, so that what is queued together shares packets; the timer is armed for
 * the endpoint's next deadline after every flush.
 */
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { DeadlineTimer } from './deadline-timer';
import type { EndpointMachine } from './endpoint-machine';

/** Large enough for a burst of full congestion windows to and from many connections at once. */
const SOCKET_BUFFER_BYTES = 8 * 1024 * 1024;

const now = () => performance.now();

function createSocket(): dgram.Socket {
  return dgram.createSocket({ type: 'udp4', recvBufferSize: SOCKET_BUFFER_BYTES, sendBufferSize: SOCKET_BUFFER_BYTES });
}

export class UdpDriver<M extends EndpointMachine> {
  private flushScheduled = false;
  private readonly timer = new DeadlineTimer(() => this.onTimer());
  private closed = false;

  private constructor(
    private readonly socket: dgram.Socket,
    readonly machine: M,
  ) {
    socket.on('message', (datagram, remote) => {
      machine.handle(now(), remote, datagram);
      this.wake();
    });
    // A send to a closed port comes back as an ICMP error on some systems: the connections' timers handle it.
    socket.on('error', () => {});
  }

  /** Binds a socket to `port` on `host` and drives `machine` on it; rejects if the port cannot be bound. */
  static async bind<M extends EndpointMachine>(host: string, port: number, machine: M): Promise<UdpDriver<M>> {
    const socket = createSocket();
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new UdpDriver(socket, machine);
  }

  /** The same, at once: the socket binds in the background (sends before it has are queued by Node). */
  static bindLater<M extends EndpointMachine>(host: string, port: number, machine: M): UdpDriver<M> {
    const socket = createSocket();
    socket.bind(port, host);
    return new UdpDriver(socket, machine);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Calls into the endpoint at the driver's time (to connect, send or close); what it queues goes out this turn. */
  act<R>(call: (now: number) => R): R {
    const result = call(now());
    this.wake();
    return result;
  }

  private wake(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    const time = now();
    for (let transmit = this.machine.pollTransmit(time); transmit !== null; transmit = this.machine.pollTransmit(time))
      this.socket.send(transmit.datagram, transmit.port, transmit.address);
    this.timer.arm(this.machine.nextTimeout());
  }

  private onTimer(): void {
    this.machine.onTimeout(now());
    this.flush();
  }

  /** Closes the endpoint's connections (their CONNECTION_CLOSE sent), then the socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.machine.close(now());
    this.flush();
    this.closed = true;
    this.timer.clear();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}
