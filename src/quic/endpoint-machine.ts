/**
 * The seam between a QUIC endpoint and the one driver that owns its socket and timer
 * (udp-driver.ts), in the shape of quinn-proto's `Endpoint`: a datagram in through `handle`
 * with the time and where it came from, datagrams out through `pollTransmit`, time in
 * through `onTimeout`. An endpoint behind it does no I/O and reads no clock, so that tests
 * and the fuzz drive it with a clock of their own.
 */
import { MAX_CID_LENGTH } from './packets';

/** Where a datagram came from, or goes. */
export interface Remote {
  readonly address: string;
  readonly port: number;
}

/** One datagram to send. */
export interface Transmit extends Remote {
  readonly datagram: Buffer;
}

export interface EndpointMachine {
  /** A datagram from `remote`, received at `now`. Never throws: what does not parse is dropped. */
  handle(now: number, remote: Remote, datagram: Buffer): void;
  /** The next datagram to send, or null when there is nothing to send now. */
  pollTransmit(now: number): Transmit | null;
  /** When `onTimeout` is due next (Infinity: nothing pending). */
  nextTimeout(): number;
  onTimeout(now: number): void;
  /** Closes every connection (their CONNECTION_CLOSE still to be polled). */
  close(now: number): void;
}

/**
 * The destination connection ID a datagram is routed by: in a long header it follows its
 * length byte; a short header does not say its length, so `shortLength` (the length of the
 * IDs this endpoint issues) is taken after the first byte.
 */
export function destinationCid(datagram: Buffer, shortLength: number): Buffer {
  const long = (datagram[0]! & 0x80) !== 0;
  return long ? datagram.subarray(6, 6 + Math.min(datagram[5] ?? 0, MAX_CID_LENGTH)) : datagram.subarray(1, 1 + shortLength);
}

/**
 * What an endpoint has to send: datagrams queued, oldest first, and the connections touched
 * since the last poll (`touch`). When the queue runs dry, `poll` drives the touched ones (each
 * through `drive`, which queues what it polls from the connection) until one queues something
 * or none is left: a connection's events may touch others (a transaction sent again
 * elsewhere), and those are driven too.
 */
export class TransmitQueue<C> {
  private readonly touched = new Set<C>();
  private queue: Transmit[] = [];
  private head = 0;

  constructor(private readonly drive: (connection: C, now: number) => void) {}

  touch(connection: C): void {
    this.touched.add(connection);
  }

  push(transmit: Transmit): void {
    this.queue.push(transmit);
  }

  poll(now: number): Transmit | null {
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      while (this.queue.length === 0 && this.touched.size > 0) {
        const due = [...this.touched];
        this.touched.clear();
        for (const connection of due) this.drive(connection, now);
      }
    }
    return this.head < this.queue.length ? this.queue[this.head++]! : null;
  }
}
