/**
 * Bytes to a port over a plain TCP socket, and the HTTP answers read back: the fuzz suite's
 * doors below fetch(), which refuses to send what an attacker sends (odd request lines,
 * duplicate or broken headers, bad chunks, pipelined requests, CONNECT). A small response
 * parser of our own reads status, headers and body (by length, chunks or close), so that an
 * answer the gateway cut short is seen as such.
 */
import net from 'node:net';

export interface RawAnswer {
  readonly status: number;
  /** Header names in lower case; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface RawExchange {
  /** Complete answers, in order (interim 100 Continue left out). */
  readonly answers: RawAnswer[];
  /** How it ended: the server closed, we stopped reading (`done`), or nothing came in time. */
  readonly ending: 'closed' | 'done' | 'timeout' | 'refused';
  /** Bytes after the last complete answer (an answer cut short, or a WebSocket's first frames). */
  readonly rest: Buffer;
}

export interface ExchangeOptions {
  readonly port: number;
  readonly bytes: Buffer;
  /** The method of each request sent, in order: a HEAD's answer has no body. */
  readonly methods: readonly string[];
  /**
   * Half-close after writing, so that the server sees the end of a request that is cut short. Node's server then
   * aborts what it has not answered yet (httpAllowHalfOpen is off): only for requests whose answers need not come.
   */
  readonly halfClose: boolean;
  /** Stop once this many answers are complete (or at a 101, or at an event stream's head). */
  readonly stopAfter: number;
  readonly timeoutMs: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');

type Parsed = { answer: RawAnswer; used: number; stream: boolean } | null;

/** The first answer in `data` if it is complete; `stream`: an answer whose body never ends (101, event stream). */
export function parseAnswer(data: Buffer, method: string | undefined, closed: boolean): Parsed {
  const end = data.indexOf(HEAD_END);
  if (end < 0) return null;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/\d\.\d (\d{3})/.exec(lines[0]!);
  if (match === null)
    return { answer: { status: 0, headers: { line: lines[0]!.slice(0, 80) }, body: Buffer.alloc(0) }, used: data.length, stream: true };
  const status = Number(match[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const start = end + 4;
  const empty = { answer: { status, headers, body: Buffer.alloc(0) }, used: start, stream: false };
  if (status === 101) return { ...empty, stream: true };
  if (method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) return empty;
  if ((headers['content-type'] ?? '').startsWith('text/event-stream')) return { ...empty, stream: true };
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = data.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) return { answer: { status, headers, body: Buffer.concat(chunks) }, used: data.length, stream: false };
      if (size === 0) {
        const trailerEnd = data.indexOf(HEAD_END, lineEnd - 2);
        if (trailerEnd < 0) return null;
        return { answer: { status, headers, body: Buffer.concat(chunks) }, used: trailerEnd + 4, stream: false };
      }
      if (data.length < lineEnd + 2 + size + 2) return null;
      chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    if (data.length < start + n) return null;
    return { answer: { status, headers, body: data.subarray(start, start + n) }, used: start + n, stream: false };
  }
  // No length: the body ends with the connection.
  return closed ? { answer: { status, headers, body: data.subarray(start) }, used: data.length, stream: false } : null;
}

/** Writes `bytes` to `port` on loopback and reads the answers until the server closes, `stopAfter` answers, or the time-out. */
export function exchange(options: ExchangeOptions): Promise<RawExchange> {
  return new Promise((resolve) => {
    const answers: RawAnswer[] = [];
    let data: Buffer = Buffer.alloc(0);
    let settled = false;
    const socket = net.connect(options.port, '127.0.0.1', () => {
      socket.write(options.bytes);
      if (options.halfClose) socket.end();
    });
    const finish = (ending: RawExchange['ending']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ answers, ending, rest: data });
    };
    /** Takes the complete answers off the front of `data`; true when reading should stop. */
    const drain = (closed: boolean): boolean => {
      for (;;) {
        if (data.length === 0) return false;
        const parsed = parseAnswer(data, options.methods[answers.length] ?? options.methods[options.methods.length - 1], closed);
        if (parsed === null) return false;
        data = data.subarray(parsed.used);
        if (parsed.answer.status >= 100 && parsed.answer.status < 200 && parsed.answer.status !== 101) continue;
        answers.push(parsed.answer);
        if (parsed.stream || answers.length >= options.stopAfter) return true;
      }
    };
    const timer = setTimeout(() => finish('timeout'), options.timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      data = data.length === 0 ? chunk : Buffer.concat([data, chunk]);
      if (drain(false)) finish('done');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') finish('refused');
      // A reset after the answer (the server closed while we were still writing) ends like a close.
    });
    socket.on('close', () => {
      drain(true);
      finish('closed');
    });
  });
}
