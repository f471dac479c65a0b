/**
 * The HTTP surface: routes, authentication, and the translation between wire shapes and
 * the pipeline. No business rule lives here.
 *
 * Paths: `POST /` (JSON-RPC), `POST /submit-batch`, `POST /api/v1/transactions` and
 * `POST /api/v1/bundles` (Jito-style, the same methods as `/`), `GET /health`, `GET /metrics`.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import pino from 'pino';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import { clip } from '../errors/client-text';
import type { ErrorKind, SlipwayError } from '../errors/error-catalogue';
import { ERROR_CATALOGUE, slipwayError } from '../errors/error-catalogue';
import { metricsRegistry, requestDuration } from '../metrics/metrics';
import type { ApiKeyRecord } from '../stores/key-store';
import type { Admission } from './admission';
import { createFastPath, writeAnswer } from './fast-path';
import { refusal } from './refusal-replies';
import { OPERATOR_PATHS, operatorGuard } from '../web/operator-access';
import type { DashboardFeed } from '../dashboard/dashboard-feed';
import { registerDashboard } from '../dashboard/dashboard-routes';
import { checkJsonBody, installJsonBodyParser } from '../web/json-body';
import type { Reply } from '../web/json-rpc-envelope';
import { createJsonRpcHandler, type JsonRpcHandlerOptions } from './json-rpc-handler';
import { createSubmissionDesk, type SubmissionDeskOptions } from './submission-desk';
import { createHealthProbe } from './health-probe';
import { assignRequestId, requestIdOf } from './request-id';

/** Request bodies above this size are refused: 5 transactions need about 8.5 KB. */
export const BODY_LIMIT_BYTES = 64 * 1024;

const JSON_RPC_PATHS = ['/', '/api/v1/transactions', '/api/v1/bundles'] as const;
const JITO_PATHS = new Set(['/api/v1/transactions', '/api/v1/bundles']);

export interface HttpServerOptions extends Omit<JsonRpcHandlerOptions, 'logError' | 'desk'>, Omit<SubmissionDeskOptions, 'logSubmission'> {
  readonly authenticator: Authenticator;
  readonly logLevel: string;
  /** A client must send its headers within this (a slowloris is cut off), and its whole request within `requestTimeoutMs`. */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** A keep-alive connection with no request in progress is closed after this. */
  readonly idleTimeoutMs: number;
  /** Who may read /metrics besides clients on this machine (operator-access.ts); empty: no one. */
  readonly metricsToken: string;
  /** The live dashboard's feed, and who may open it besides this machine. */
  readonly dashboard?: { readonly feed: DashboardFeed; readonly token: string };
  /** Connections per client address, requests in progress, event-loop lateness (admission.ts); shared with the WebSocket listeners. */
  readonly admission: Admission;
}

/** Log lines are written when this much has gathered (or at the next flush). */
const LOG_BUFFER_BYTES = 4096;
/** …and at least this often. */
const LOG_FLUSH_MS = 250;

/** How often Node looks for connections past their time-outs (its default, 30 s, would let a slow client linger that long). */
const TIMEOUT_CHECK_MS = 500;

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null;
  }
}

export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const logStream = pino.destination({ dest: 2, sync: false, minLength: LOG_BUFFER_BYTES });
  // A quiet gateway's lines must not wait for the buffer to fill.
  const logFlusher = setInterval(() => logStream.flush(), LOG_FLUSH_MS);
  logFlusher.unref();
  const app = Fastify({
    logger: {
      level: options.logLevel,
      // Logs go to stderr (stdout carries what the CLI prints for people and scripts), in
      // blocks: a write per line cost a tenth of the throughput at info level, where every
      // submission logs a line. Lines still buffered at a kill -9 are lost; on a graceful stop they are flushed.
      stream: logStream,
      // Query strings can carry API keys (Jito's `uuid`): log the path alone.
      serializers: { req: (req) => ({ method: req.method, path: req.url.split('?')[0] }) },
    },
    // A line per request is far too frequent to log on a submission gateway (a line per submission is logged instead).
    logController: new LogController({ disableRequestLogging: true }),
    // The id every request got on arrival (request-id.ts), so Fastify's lines carry it too.
    genReqId: (request) => requestIdOf(request),
    bodyLimit: BODY_LIMIT_BYTES,
    keepAliveTimeout: options.idleTimeoutMs,
    // Refusals before a request is read (too slow, headers too large, not HTTP) in Slipway's `{code, message}` shape.
    clientErrorHandler: (error, socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, message] =
        error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [
              408,
              `the request took too long to arrive: send its headers within ${options.headersTimeoutMs / 1000} s and all of it within ${options.requestTimeoutMs / 1000} s`,
            ]
          : error.code === 'HPE_HEADER_OVERFLOW'
            ? [431, `the request headers are larger than ${http.maxHeaderSize} bytes`]
            : [400, 'the request is not valid HTTP/1.1'];
      answerRaw(socket, status, message);
    },
    // A target Fastify's router cannot decode (`/%ZZ`), and the like: refused in Slipway's shape, the target not echoed.
    frameworkErrors: (_error, _request, reply) => {
      (reply as FastifyReply)
        .code(400)
        .send({ code: ERROR_CATALOGUE.INVALID_REQUEST.code, message: 'the request target is not a valid path (bad percent-encoding?)' });
    },
    forceCloseConnections: 'idle',
    // The hot routes are served before Fastify sees them (fast-path.ts); the server is
    // otherwise the one Fastify would make, with its timeouts.
    serverFactory: (handler, settings) => {
      const server = http.createServer(
        {
          headersTimeout: options.headersTimeoutMs,
          requestTimeout: options.requestTimeoutMs,
          connectionsCheckingInterval: TIMEOUT_CHECK_MS,
        },
        (request, response) => {
          assignRequestId(request, response);
          const refused = admission.admit(request, response);
          if (refused !== null) return answerAtOnce(request, response, refused.error, refused.closeConnection);
          if (fast === undefined || !fast(request, response)) handler(request, response);
        },
      );
      server.on('connection', (socket: Socket) => admission.connected(socket));
      // CONNECT asks for a tunnel: Node hands its socket over and, with no listener, drops it unanswered.
      server.on('connect', (_request: IncomingMessage, socket: Socket) => {
        socket.on('error', () => {});
        answerRaw(socket, 405, 'CONNECT is not served: Slipway is not a proxy');
      });
      server.keepAliveTimeout = settings.keepAliveTimeout as number;
      server.setTimeout(settings.connectionTimeout as number);
      return server;
    },
  });
  // Made below, once the routes it serves exist; the server's handler reads it meanwhile.
  // eslint-disable-next-line prefer-const
  let fast: ReturnType<typeof createFastPath> | undefined;
  // Refusals on arrival (over capacity, too many connections, shutting down), before Fastify or the fast path.
  const { admission } = options;
  app.addHook('preClose', async () => admission.close());
  app.addHook('onClose', async () => {
    clearInterval(logFlusher);
    await new Promise<void>((resolve) => logStream.flush(() => resolve()));
  });
  app.decorateRequest('apiKey', null);

  // Bodies are parsed as JSON whatever their Content-Type says (curl's default is form
  // encoding); a parse failure is answered by the route in the route's own shape.
  installJsonBodyParser(app);

  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url === undefined || OPERATOR_PATHS.has(request.routeOptions.url)) return;
    const key =
      request.headers['x-api-key'] ??
      (JITO_PATHS.has(request.routeOptions.url) ? jitoCredential(request) : undefined) ??
      (request.query as Record<string, string | string[] | undefined>)['api-key'];
    const presented = Array.isArray(key) ? key[0] : key;
    const record = options.authenticator.authenticate(presented);
    if (record === null) {
      const down = options.authenticator.unavailable();
      if (down !== null) return refuse(request, reply, slipwayError('STORE_UNAVAILABLE', down, { retryAfterMs: 1_000 }));
      const message =
        presented === undefined || presented === ''
          ? 'missing API key: send it in the x-api-key header'
          : 'invalid API key: it is unknown or has been revoked';
      return refuse(request, reply, slipwayError('UNAUTHORIZED', message));
    }
    request.apiKey = record;
    const busy = admission.admitKey(record.id, reply.raw);
    if (busy !== null) return refuse(request, reply, busy);
  });

  // One histogram child per path, bound once: labelling on every request costs more than observing.
  const durations = new Map<string, ReturnType<typeof requestDuration.labels>>();
  app.addHook('onResponse', async (request, reply) => {
    const path = request.routeOptions.url;
    if (path === undefined) return;
    let child = durations.get(path);
    if (child === undefined) durations.set(path, (child = requestDuration.labels({ path })));
    child.observe(reply.elapsedTime / 1000);
  });

  // One info line per submission outcome (never the transaction or the key).
  const desk = createSubmissionDesk({ ...options, logSubmission: (outcome) => app.log.info(outcome, 'submission') });
  const handleRpc = createJsonRpcHandler({
    ...options,
    desk,
    logError: (error, method) => app.log.error({ err: error, method }, 'request failed unexpectedly'),
  });

  /** POST / and the Jito paths: what to answer to a JSON-RPC body from `key`. */
  const answerRpc = async (body: unknown, key: ApiKeyRecord, antiMev: boolean | SlipwayError, requestId: string): Promise<Reply> => {
    const unreadable = checkJsonBody(body);
    if (unreadable !== null) return refusal('/', unreadable);
    if (typeof antiMev !== 'boolean') return refusal('/', antiMev);
    const reply = await handleRpc(body, { key, antiMev, requestId });
    return reply.status === 204 ? { status: 204 } : reply;
  };

  /** POST /submit-batch: what to answer to a body from `key` (the desk counts and logs it). */
  const answerBatch = async (body: unknown, key: ApiKeyRecord, antiMev: boolean | SlipwayError, requestId: string): Promise<Reply> => {
    const request = { key, antiMev: antiMev === true, requestId };
    const unreadable = checkJsonBody(body);
    const submitted =
      unreadable !== null
        ? desk.refuse('submitBatch', request, unreadable)
        : typeof antiMev !== 'boolean'
          ? desk.refuse('submitBatch', request, antiMev)
          : await desk.submitBatch(body, request);
    if (!submitted.ok) return refusal('/submit-batch', submitted.error);
    return { status: 200, body: { code: 1, message: 'success', signatures: submitted.value } };
  };

  fast = createFastPath({
    authenticator: options.authenticator,
    admitKey: (keyId, request, response) => {
      const busy = admission.admitKey(keyId, response);
      if (busy !== null) answerAtOnce(request, response, busy, false);
      return busy === null;
    },
    bodyLimit: BODY_LIMIT_BYTES,
    routes: { '/': answerRpc, '/submit-batch': answerBatch },
    failed: (path, error) => {
      app.log.error({ err: error }, 'request failed unexpectedly');
      return refusal(path, slipwayError('INTERNAL_ERROR', 'Internal error: the request could not be completed'));
    },
  });

  for (const path of JSON_RPC_PATHS) {
    app.post(path, async (request, reply) =>
      send(reply, await answerRpc(request.body, request.apiKey!, parseAntiMev(request), request.id)),
    );
  }

  app.post('/submit-batch', async (request, reply) =>
    send(reply, await answerBatch(request.body, request.apiKey!, parseAntiMev(request), request.id)),
  );

  // Prometheus's text format, for the operator (operator-access.ts says who may read it).
  app.get('/metrics', { onRequest: operatorGuard('metricsToken', options.metricsToken) }, async (_request, reply) =>
    reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics()),
  );

  if (options.dashboard !== undefined) registerDashboard(app, options.dashboard.feed, options.dashboard.token);

  // Alive and able to reach the network: 200 with the slot; alive but cut off from the reads upstream: 503 with why.
  const health = createHealthProbe(() => options.router.getSlot());
  app.get('/health', async (_request, reply) => {
    const keys = options.authenticator.unavailable();
    if (keys !== null) return reply.code(503).send({ status: 'unavailable', message: keys });
    const now = await health();
    return now.ok ? { status: 'ok', slot: now.slot } : reply.code(503).send({ status: 'unavailable', message: now.reason });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      code: 404,
      message: `no route for ${clip(request.method, 16)} ${clip(request.url.split('?')[0]!)}; Slipway serves POST /, POST /submit-batch, POST /api/v1/transactions, POST /api/v1/bundles, GET /health, GET /metrics and GET /dashboard`,
    });
  });

  app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) app.log.error({ err: error }, 'request failed unexpectedly');
    const kind: ErrorKind = status === 413 ? 'BODY_TOO_LARGE' : status < 500 ? 'INVALID_REQUEST' : 'INTERNAL_ERROR';
    const message =
      status === 413
        ? `the request body is larger than ${BODY_LIMIT_BYTES} bytes`
        : status < 500
          ? `bad request: ${clip(error.message, 200)}`
          : 'Internal error: the request could not be completed';
    return refuse(request, reply, slipwayError(kind, message));
  });

  return app;
}

/** An answer written straight to a socket that Node's HTTP parser has let go of, then the socket closed. */
function answerRaw(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ code: ERROR_CATALOGUE.INVALID_REQUEST.code, message });
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy();
}

/** A refusal on arrival, in the path's shape, written before the body is read (Node discards it). */
function answerAtOnce(request: IncomingMessage, response: ServerResponse, error: SlipwayError, closeConnection: boolean): void {
  const answer = refusal(request.url?.split('?')[0], error);
  writeAnswer(response, closeConnection ? { ...answer, headers: { ...answer.headers, connection: 'close' } } : answer);
}

function send(reply: FastifyReply, answer: Reply): FastifyReply {
  if (answer.headers !== undefined) reply.headers(answer.headers);
  return answer.body === undefined ? reply.code(answer.status).send() : reply.code(answer.status).send(answer.body);
}

function refuse(request: FastifyRequest, reply: FastifyReply, error: SlipwayError): FastifyReply {
  return send(reply, refusal(request.routeOptions.url, error));
}

/** Jito clients carry their credential in `x-jito-auth` or in the `uuid` query parameter. */
function jitoCredential(request: FastifyRequest): string | string[] | undefined {
  return request.headers['x-jito-auth'] ?? (request.query as Record<string, string | string[] | undefined>).uuid;
}

function parseAntiMev(request: FastifyRequest): boolean | SlipwayError {
  const value = (request.query as Record<string, unknown>).anti_mev;
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  return slipwayError('INVALID_PARAMS', 'the anti_mev query parameter must be 1 (protection on) or 0 (off)');
}
