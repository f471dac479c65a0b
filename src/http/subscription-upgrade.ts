/**
 * The WebSocket upgrade request, checked before a socket becomes a subscription connection:
 * method and HTTP version, admission (connections per client, shedding, shutdown), a request
 * target that parses, and an API key. Kept apart from the connections so that everything a
 * hostile handshake can do ends here: a refused request is answered in Slipway's
 * `{code, message}` shape and its socket closed, never left to the process's error path.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Authenticator } from '../auth/authenticator';
import { quote } from '../errors/client-text';
import type { SlipwayError } from '../errors/error-catalogue';
import type { Admission } from './admission';
import { answerAndClose } from './raw-answer';

/** A Sec-WebSocket-Key: 16 bytes in Base64 (RFC 6455 §4.1), as the ws library requires. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/** The key an admitted upgrade presented, and the record it names. */
export interface UpgradeKey {
  readonly presentedKey: string;
  readonly keyId: string;
}

/**
 * The key of an upgrade request that is let in; null when it is not, after answering it and
 * closing its socket.
 */
export function checkUpgrade(
  request: IncomingMessage,
  socket: Duplex,
  admission: Admission,
  authenticator: Authenticator,
): UpgradeKey | null {
  // The HTTP server stops watching a socket once it is upgraded: a reset must not become an uncaught 'error'.
  socket.on('error', () => socket.destroy());
  if (request.method !== 'GET') return rejectUpgrade(socket, 405, 'a WebSocket handshake is a GET request');
  if (request.httpVersion !== '1.1') return rejectUpgrade(socket, 400, 'a WebSocket handshake needs HTTP/1.1');
  // What the ws library checks next, answered here in Slipway's shape instead of its text/html.
  if (!WEBSOCKET_KEY.test(request.headers['sec-websocket-key'] ?? ''))
    return rejectUpgrade(socket, 400, 'a WebSocket handshake needs a Sec-WebSocket-Key header: 16 random bytes in Base64');
  const version = request.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8')
    return rejectUpgrade(socket, 400, `Sec-WebSocket-Version must be 13 (got ${quote(version ?? null)})`);
  const refused = admission.admitUpgrade(request);
  if (refused !== null) return rejectUpgrade(socket, refused.status, refused.error);
  let query: URLSearchParams;
  try {
    query = new URL(request.url ?? '/', 'http://slipway').searchParams;
  } catch {
    return rejectUpgrade(socket, 400, 'the request target is not a valid path');
  }
  const header = request.headers['x-api-key'];
  if (query.getAll('api-key').length > 1)
    return rejectUpgrade(socket, 401, 'api-key was given more than once in the query: give ?api-key= once');
  const presented = (Array.isArray(header) ? header[0] : header) ?? query.get('api-key') ?? undefined;
  const record = authenticator.authenticate(presented);
  if (record === null) {
    const down = authenticator.unavailable();
    if (down !== null) return rejectUpgrade(socket, 503, down);
    return rejectUpgrade(
      socket,
      401,
      presented === undefined || presented === ''
        ? 'missing API key: send it in the x-api-key header or as ?api-key='
        : 'invalid API key: it is unknown or has been revoked',
    );
  }
  return { presentedKey: presented!, keyId: record.id };
}

/**
 * Answers an upgrade request that is not let in, in Slipway's `{code, message}` shape, and
 * closes its socket. Returns null, so that a refusal can be returned from `checkUpgrade`.
 */
export function rejectUpgrade(socket: Duplex, status: number, reason: string | SlipwayError): null {
  const message = typeof reason === 'string' ? reason : reason.message;
  answerAndClose(socket, status, JSON.stringify({ code: status, message }));
  return null;
}
