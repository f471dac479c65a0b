/**
 * HTTP/1.1 over a raw socket, for tests that must send exact bytes (framing, pipelining,
 * half-closes) and read each answer as it comes.
 */
import net from 'node:net';
import { leanHandoversTotal, leanRequestsTotal } from '../../src/metrics/metrics';

export interface RawResponse {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: string;
}

export interface ConnectionOptions {
  /** The client keeps its side open when the server ends its own. */
  readonly allowHalfOpen?: boolean;
  /** Another loopback address (127.0.0.x), for a per-address count of its own. */
  readonly localAddress?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection written to in raw bytes, its answers read one by one (Content-Length framed). */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private readonly waiting: (() => void)[] = [];
  /** The server ended its side (FIN) or the connection closed. */
  ended = false;
  /** The connection is fully closed. */
  closedFully = false;
  readonly socket: net.Socket;

  constructor(port: number, options: ConnectionOptions = {}) {
    this.socket = net.connect({
      port,
      host: '127.0.0.1',
      allowHalfOpen: options.allowHalfOpen ?? false,
      localAddress: options.localAddress,
    });
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    this.socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
    this.socket.on('close', () => {
      this.ended = true;
      this.closedFully = true;
      this.wake();
    });
    this.socket.on('error', () => {});
  }

  private wake(): void {
    this.waiting.splice(0).forEach((wake) => wake());
  }

  async ready(): Promise<void> {
    if (this.socket.connecting) await new Promise((resolve) => this.socket.once('connect', resolve));
  }

  write(data: string | Buffer): void {
    this.socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data);
  }

  /** Everything received and not yet read as an answer. */
  rest(): string {
    return this.buffer.toString('latin1');
  }

  /** The next answer, or null when the connection ended first. */
  async next(timeoutMs = 10_000): Promise<RawResponse | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end !== -1) {
        const lines = this.buffer.toString('latin1', 0, end).split('\r\n');
        const headers = lines.slice(1).map((line): [string, string] => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        });
        const length = Number(headers.find(([name]) => name === 'content-length')?.[1] ?? 0);
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.toString('utf8', end + 4, end + 4 + length);
          this.buffer = this.buffer.subarray(end + 4 + length);
          return { status: Number(lines[0]!.split(' ')[1]), headers, body };
        }
      }
      if (this.ended) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no answer within ${timeoutMs} ms (have: ${JSON.stringify(this.buffer.toString('latin1'))})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Every answer until the server ends the connection (or `timeoutMs` passes: then throws). */
  async all(timeoutMs = 10_000): Promise<RawResponse[]> {
    const answers: RawResponse[] = [];
    for (;;) {
      const answer = await this.next(timeoutMs);
      if (answer === null) return answers;
      answers.push(answer);
    }
  }

  /** Resolves once the server has ended the connection (or after `timeoutMs`, false). */
  async closed(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) await sleep(20);
    return this.ended;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A request in lean HTTP's plain form, with `extra` header lines. */
export function request(path: string, key: string, body: string, extra: string[] = []): string {
  return [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    `x-api-key: ${key}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...extra,
    '',
    body,
  ].join('\r\n');
}

/** Requests lean HTTP has served in this process so far. */
export const leanServed = async () => (await leanRequestsTotal.get()).values[0]?.value ?? 0;

/** Connections lean HTTP has handed to node:http for `reason` in this process so far. */
export const leanHandovers = async (reason: string) =>
  (await leanHandoversTotal.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

/** What of an answer must be the same whichever path served it: not its Date, nor its generated request id. */
export const comparable = (response: RawResponse | null) =>
  response === null
    ? null
    : {
        status: response.status,
        headers: response.headers.map(([name, value]) => [name, name === 'date' || name === 'x-request-id' ? '*' : value]),
        body: response.body,
      };
