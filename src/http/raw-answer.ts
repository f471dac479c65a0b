/**
 * An answer written straight to a socket that Node's HTTP parser has let go of (CONNECT, a
 * refused upgrade, a request it could not parse), then a lingering close: the socket is
 * half-closed and what the client still sends is read and dropped for a moment. Closing at
 * once with bytes unread makes the kernel answer with a reset, and a client still writing its
 * request can lose the answer to it before reading it (RFC 9112 §9.6 asks for this half-close;
 * seen in the fuzz slice under load).
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';

/** How long the socket stays open after the answer for the client to read it and close. */
const LINGER_MS = 1_000;
/** What the client may still send meanwhile; past it the socket is cut. */
const LINGER_MAX_BYTES = 1024 * 1024;

/** Writes the status line, `headers` and the JSON `body`, then closes as above. */
export function answerAndClose(socket: Duplex, status: number, body: string, headers: Record<string, string> = {}): void {
  // A second parse error on the same socket arrives here again once its answer is on the way.
  if (socket.destroyed || !socket.writable) return;
  socket.on('error', () => socket.destroy());
  let head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  socket.end(`${head}connection: close\r\n\r\n${body}`);
  let dropped = 0;
  socket.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_MAX_BYTES) socket.destroy();
  });
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
