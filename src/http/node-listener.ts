/**
 * The `node:http` server under Fastify: what happens to a connection and a request before
 * Fastify sees them. Each request gets its id and passes admission (a refusal is written at
 * once, before the body is read); the hot routes are then served by the fast path
 * (fast-path.ts), everything else by Fastify. Requests Node's parser gives up on (too slow,
 * headers too large, not HTTP, CONNECT) are answered here in Slipway's `{code, message}` shape.
 */
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ERROR_CATALOGUE, type SlipwayError } from '../errors/error-catalogue';
import type { Admission } from './admission';
import { ONLY_WEBSOCKET_UPGRADES } from './foreign-upgrade';
import { writeAnswer } from './fast-path';
import type { LeanHttp } from './lean-http';
import { answerProtocolRefusal, protocolRefusal, refuseExpectation } from './protocol-refusals';
import { answerAndClose } from './raw-answer';
import { refuseOnPath } from './refusal-replies';
import { assignRequestId } from './request-id';

/** How often Node looks for connections past their time-outs (its default, 30 s, would let a slow client linger that long). */
const TIMEOUT_CHECK_MS = 500;

export interface NodeListenerOptions {
  /** A client must send its headers within this (a slowloris is cut off), and its whole request within `requestTimeoutMs`. */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly admission: Admission;
  /** Serves the request and returns true, or returns false to leave it to Fastify. */
  readonly fastPath: () => ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined;
  /** Lean HTTP (lean-http.ts), when the leanHttp setting asks for it: each connection starts there. */
  readonly leanServer?: () => LeanHttp | undefined;
}

const httpAgainFor = new WeakMap<http.Server, (socket: Socket) => void>();

/**
 * How a connection of `server` (one made by nodeServerFactory) that node:http has let go of
 * starts HTTP again, already counted by admission: for an upgrade Slipway does not do
 * (foreign-upgrade.ts).
 */
export function httpAgain(server: http.Server): ((socket: Duplex) => void) | undefined {
  const again = httpAgainFor.get(server);
  return again === undefined ? undefined : (socket) => again(socket as Socket);
}

/** Fastify's `serverFactory`: the server Fastify would make, with its time-outs, and admission and the fast path in front. */
export function nodeServerFactory(options: NodeListenerOptions) {
  const { admission } = options;
  return (handler: RequestListener, settings: { keepAliveTimeout?: number; connectionTimeout?: number }): http.Server => {
    const server = http.createServer(
      {
        headersTimeout: options.headersTimeoutMs,
        requestTimeout: options.requestTimeoutMs,
        connectionsCheckingInterval: TIMEOUT_CHECK_MS,
        // A request without Host is refused in protocol-refusals.ts, in Slipway's shape, not node:http's bare 400.
        requireHostHeader: false,
        ...ONLY_WEBSOCKET_UPGRADES,
      },
      (request, response) => {
        assignRequestId(request, response);
        const unserved = protocolRefusal(request);
        if (unserved !== null) return answerProtocolRefusal(response, unserved);
        const refused = admission.admit(request, response);
        if (refused !== null) return answerAtOnce(request, response, refused.error, refused.closeConnection);
        const fast = options.fastPath();
        if (fast === undefined || !fast(request, response)) handler(request, response);
      },
    );
    // node:http's own connection handler, taken off the server so that a connection can start
    // in lean HTTP and be handed to it later (or at once, without lean HTTP).
    const nodeHandlers = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    const toNode = (socket: Socket) => {
      for (const handler of nodeHandlers) handler.call(server, socket);
    };
    /** Starts HTTP on a connection: in lean HTTP, or at once in node:http. */
    const toHttp = (socket: Socket) => {
      const leanServer = options.leanServer?.();
      if (leanServer === undefined) toNode(socket);
      else leanServer.adopt(socket, toNode);
    };
    server.on('connection', (socket: Socket) => {
      admission.connected(socket);
      toHttp(socket);
    });
    httpAgainFor.set(server, toHttp);
    server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
      assignRequestId(request, response);
      refuseExpectation(request, response);
    });
    // CONNECT asks for a tunnel: Node hands its socket over and, with no listener, drops it unanswered.
    server.on('connect', (_request: IncomingMessage, socket: Socket) => {
      answerRaw(socket, 405, 'CONNECT is not served: Slipway is not a proxy');
    });
    // A client that half-closes after its requests still gets its answers (node:http ends the connection at the FIN otherwise).
    (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    server.keepAliveTimeout = settings.keepAliveTimeout as number;
    server.setTimeout(settings.connectionTimeout as number);
    return server;
  };
}

/** Fastify's `clientErrorHandler`: refusals before a request is read, in Slipway's shape. */
export function clientErrorHandler(options: Pick<NodeListenerOptions, 'headersTimeoutMs' | 'requestTimeoutMs'>) {
  return (error: NodeJS.ErrnoException, socket: Duplex): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // Bytes after a request that said Connection: close (llhttp's HPE_CLOSED_CONNECTION): the
    // requests before them are being answered, the last with Connection: close, after which
    // node:http closes the connection; the bytes are ignored (RFC 9112 §9.6), not refused over
    // those answers.
    if (error.code === 'HPE_CLOSED_CONNECTION') return;
    const [status, message] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            408,
            `the request took too long to arrive: send its headers within ${options.headersTimeoutMs / 1000} s and all of it within ${options.requestTimeoutMs / 1000} s`,
          ]
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, `the request headers are larger than ${http.maxHeaderSize} bytes`]
          : error.code === 'HPE_INVALID_VERSION'
            ? // llhttp refuses versions such as HTTP/1.2 or 3.0 itself (2.0 and 0.9 it reads: protocol-refusals.ts); the same 505.
              [505, 'that HTTP version is not served: send HTTP/1.1 (HTTP/1.0 is served too)']
            : [400, 'the request is not valid HTTP/1.1'];
    answerRaw(socket, status, message);
  };
}

/** A refusal on arrival, in the path's shape, written before the body is read (Node discards it). */
export function answerAtOnce(request: IncomingMessage, response: ServerResponse, error: SlipwayError, closeConnection: boolean): void {
  const answer = refuseOnPath(request.url?.split('?')[0], error);
  writeAnswer(response, closeConnection ? { ...answer, headers: { ...answer.headers, connection: 'close' } } : answer);
}

function answerRaw(socket: Duplex, status: number, message: string): void {
  answerAndClose(socket, status, JSON.stringify({ code: ERROR_CATALOGUE.INVALID_REQUEST.code, message }));
}
