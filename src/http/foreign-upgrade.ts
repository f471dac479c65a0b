/**
 * Upgrade requests for a protocol Slipway does not speak (`Upgrade: h2c`, which `curl
 * --http2` sends on a cleartext connection's first request, or anything but `websocket`).
 * RFC 9110 §7.8 lets a server ignore the header and answer in HTTP/1.1, and clients expect
 * that; but node:http hands every request that asks to upgrade to the server's 'upgrade' listener (the WebSocket one). Node.js
 * 24.9 and 22.23 let a server say which upgrades it takes (ONLY_WEBSOCKET_UPGRADES); on Node 20
 * the main port gives such a request back to HTTP from that listener, its parser let go: its
 * head rebuilt without the upgrade (the header, `HTTP2-Settings`, and those tokens of
 * `Connection`), followed by the bytes already read, is put back on the socket for a parser
 * of its own.
 */
import type { IncomingMessage, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';

/** Whether the request asks for a WebSocket, the one upgrade Slipway serves (as the ws library reads it: the whole value). */
export function isWebSocketUpgrade(request: IncomingMessage): boolean {
  return request.headers.upgrade?.trim().toLowerCase() === 'websocket';
}

/**
 * Where node:http lets a server choose which upgrades to take (`shouldUpgradeCallback`: Node.js
 * 24.9, 22.23 and later), only WebSocket handshakes go to the 'upgrade' listener and every other
 * request is an HTTP request; older versions ignore the option, and replayWithoutUpgrade
 * gives such requests back to HTTP from that listener.
 */
export const ONLY_WEBSOCKET_UPGRADES = { shouldUpgradeCallback: takesUpgrade } as ServerOptions;

/**
 * A request node:http should take as an upgrade: a WebSocket handshake, or one with a chunked
 * body (node:http's parser stops at an upgrade's head, and a declined one's chunked body was
 * never read: the request hung until its connection was cut, seen in the fuzz slice), which
 * is refused from the 'upgrade' listener instead.
 */
function takesUpgrade(request: IncomingMessage): boolean {
  return isWebSocketUpgrade(request) || request.headers['transfer-encoding'] !== undefined;
}

const UPGRADE_TOKENS = new Set(['upgrade', 'http2-settings']);

/** The request's head as it came, but for the upgrade: node:http parsed and checked it, so its parts are safe to write again. */
export function headWithoutUpgrade(request: IncomingMessage): string {
  let head = `${request.method} ${request.url} HTTP/${request.httpVersion}\r\n`;
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === 'upgrade' || lower === 'http2-settings') continue;
    let value = raw[i + 1]!;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token !== '' && !UPGRADE_TOKENS.has(token.toLowerCase()))
        .join(', ');
      if (value === '') continue;
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}

/** Puts the request back on `socket` without its upgrade, and gives the socket to `toHttp` (a new HTTP parser). */
export function replayWithoutUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, toHttp: (socket: Duplex) => void): void {
  socket.pause();
  socket.unshift(Buffer.concat([Buffer.from(headWithoutUpgrade(request), 'latin1'), head]));
  toHttp(socket);
  socket.resume();
}
