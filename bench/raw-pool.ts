/**
 * The open-loop client's connections: HTTP/1.1 over plain `net` sockets, one request at a
 * time on each (no pipelining), requests beyond the free connections waiting in order.
 *
 * Why not undici: the load generator shares the machine's two cores with the server it
 * measures, and undici cost about 130 µs of CPU a request here (0.36 of a core at 2,700
 * requests/s), CPU taken from the server at the moment it is measured, most of all from a
 * server near its knee. This client writes each request as one string and reads only what
 * it must of the answer (status, Content-Length, the body): the open-loop client in all
 * (timers, histogram, bodies) measured 85 µs a request with it.
 *
 * It understands what the servers measured answer with: a Content-Length body. Anything else
 * (chunked, no length, a closed connection) fails that request, with the reason.
 */
import net from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly body: Buffer;
}

interface Waiting {
  readonly head: string;
  readonly body: string;
  readonly resolve: (answer: RawAnswer) => void;
  readonly reject: (error: Error) => void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD = 16 * 1024;

/** The status and Content-Length of a response head, or a reason it cannot be read. */
export function parseResponseHead(head: string): { status: number; length: number } | string {
  const status = /^HTTP\/1\.[01] (\d{3}) /.exec(head);
  if (status === null) return `not an HTTP/1.1 status line: ${JSON.stringify(head.slice(0, 40))}`;
  if (/\r\ntransfer-encoding:/i.test(head)) return 'a chunked answer (this client reads Content-Length bodies only)';
  const length = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(\r\n|$)/i.exec(head);
  if (length === null) return 'an answer without Content-Length';
  return { status: Number(status[1]), length: Number(length[1]) };
}

class RawConnection {
  private socket: net.Socket | undefined;
  private buffered: Buffer = Buffer.alloc(0);
  private current: Waiting | undefined;
  private expected: { status: number; length: number; bodyAt: number } | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly onFree: (connection: RawConnection) => void,
  ) {}

  get busy(): boolean {
    return this.current !== undefined;
  }

  send(request: Waiting): void {
    this.current = request;
    const socket = this.socket ?? this.connect();
    socket.write(request.head + request.body);
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private connect(): net.Socket {
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    const lost = (why: string) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.buffered = Buffer.alloc(0);
      this.expected = undefined;
      this.finish(new Error(why));
    };
    socket.on('error', (error) => lost(error.message));
    socket.on('close', () => lost('the server closed the connection'));
    this.socket = socket;
    return socket;
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    if (this.expected === undefined) {
      const end = this.buffered.indexOf(HEAD_END);
      if (end === -1) {
        if (this.buffered.length > MAX_HEAD) this.fail('an answer head over 16 KB');
        return;
      }
      const head = parseResponseHead(this.buffered.toString('latin1', 0, end + 2));
      if (typeof head === 'string') return this.fail(head);
      this.expected = { ...head, bodyAt: end + HEAD_END.length };
    }
    const { status, length, bodyAt } = this.expected;
    if (this.buffered.length < bodyAt + length) return;
    if (this.buffered.length > bodyAt + length) return this.fail('bytes after the answer, which no request asked for');
    const body = this.buffered.subarray(bodyAt);
    this.buffered = Buffer.alloc(0);
    this.expected = undefined;
    this.finish(undefined, { status, body });
  }

  /** Fails the request in flight and drops the connection (what follows on it cannot be trusted). */
  private fail(why: string): void {
    const socket = this.socket;
    this.socket = undefined;
    this.buffered = Buffer.alloc(0);
    this.expected = undefined;
    socket?.destroy();
    this.finish(new Error(why));
  }

  private finish(error: Error | undefined, answer?: RawAnswer): void {
    const request = this.current;
    this.current = undefined;
    if (request !== undefined) {
      if (error !== undefined) request.reject(error);
      else request.resolve(answer!);
    }
    this.onFree(this);
  }
}

export class RawHttpPool {
  private readonly connections: RawConnection[];
  private readonly waiting: Waiting[] = [];
  private readonly hostHeader: string;
  private closed = false;

  constructor(url: string, connections: number) {
    const { hostname, port, host } = new URL(url);
    this.hostHeader = host;
    this.connections = Array.from({ length: connections }, () => new RawConnection(hostname, Number(port), (c) => this.freed(c)));
  }

  /** One POST; `headers` are written as given (names and values the caller's). */
  request(path: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
    if (this.closed) return Promise.reject(new Error('the pool is closed'));
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      const request = { head, body, resolve, reject };
      const free = this.connections.find((c) => !c.busy);
      if (free === undefined) this.waiting.push(request);
      else free.send(request);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const request of this.waiting.splice(0)) request.reject(new Error('the pool is closed'));
    for (const connection of this.connections) connection.close();
  }

  private freed(connection: RawConnection): void {
    const next = this.waiting.shift();
    if (next !== undefined && !this.closed) connection.send(next);
  }
}
