/**
 * The HTTP surface: routes, authentication, and the translation between wire shapes and
 * the pipeline. No business rule lives here.
 *
 * Paths: `POST /` (JSON-RPC), `POST /submit-batch`, `POST /api/v1/transactions` and
 * `POST /api/v1/bundles` (Jito-style, the same methods as `/`), `GET /api/v1/bundles/tip_floor`
 * (Jito's tip floor, tip-floor-route.ts), `GET /health`, `GET /metrics`.
 */
import type { FastifyInstance } from 'fastify';
import Fastify, { LogController, type FastifyReply } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import { ERROR_CATALOGUE, slipwayError } from '../errors/error-catalogue';
import { requestDuration } from '../metrics/metrics';
import type { Admission } from './admission';
import { createFastPath } from './fast-path';
import { createLeanHttp, type LeanHttp } from './lean-http';
import { refuseOnPath } from './refusal-replies';
import { installJsonBodyParser } from '../web/json-body';
import { registerFallbacks } from './fallback-handlers';
import { checkApiKey } from './key-check';
import { createLogStream } from './log-stream';
import { answerAtOnce, clientErrorHandler, nodeServerFactory, type NodeListenerOptions } from './node-listener';
import { registerOperatorRoutes, type OperatorRoutesOptions } from './operator-routes';
import { requestIdOf } from './request-id';
import { metaOf, parseAntiMev, sendReply } from './route-replies';
import { createRouteHandlers, type RouteHandlersOptions } from './route-handlers';
import { registerTipFloorRoutes } from './tip-floor-route';
import type { TipFloorReader } from '../advice/tip-floor-reader';

/** Request bodies above this size are refused: 5 transactions need about 8.5 KB. */
export const BODY_LIMIT_BYTES = 64 * 1024;

const JSON_RPC_PATHS = ['/', '/api/v1/transactions', '/api/v1/bundles'] as const;

export type HttpServerOptions = RouteHandlersOptions &
  OperatorRoutesOptions &
  Omit<NodeListenerOptions, 'fastPath'> & {
    readonly authenticator: Authenticator;
    readonly logLevel: string;
    /** A keep-alive connection with no request in progress is closed after this. */
    readonly idleTimeoutMs: number;
    /** Connections per client address, requests in progress, event-loop lateness (admission.ts); shared with the WebSocket listeners. */
    readonly admission: Admission;
    /** Submissions read and answered off the socket (lean-http.ts). */
    readonly leanHttp: boolean;
    /** What `GET /api/v1/bundles/tip_floor` answers. */
    readonly tipFloor: TipFloorReader;
  };

export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const logs = createLogStream();
  // Made below, once the routes it serves exist (they log through the app); the node:http server asks for it on each request.
  // eslint-disable-next-line prefer-const
  let fast: ReturnType<typeof createFastPath> | undefined;
  let lean: LeanHttp | undefined;
  const app = Fastify({
    logger: {
      level: options.logLevel,
      stream: logs.stream,
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
    clientErrorHandler: clientErrorHandler(options),
    // A target Fastify's router cannot decode (`/%ZZ`), and the like: refused in Slipway's shape, the target not echoed.
    frameworkErrors: (_error, _request, reply) => {
      (reply as FastifyReply)
        .code(400)
        .send({ code: ERROR_CATALOGUE.INVALID_REQUEST.code, message: 'the request target is not a valid path (bad percent-encoding?)' });
    },
    forceCloseConnections: 'idle',
    // The hot routes are served before Fastify sees them (fast-path.ts); the server is
    // otherwise the one Fastify would make, with its timeouts.
    serverFactory: nodeServerFactory({ ...options, fastPath: () => fast, leanServer: () => lean }),
  });
  // Refusals on arrival (over capacity, too many connections, shutting down), before Fastify or the fast path.
  const { admission } = options;
  app.addHook('preClose', async () => {
    admission.close();
    lean?.close();
  });
  app.addHook('onClose', async () => logs.close());
  app.decorateRequest('apiKey', null);

  // Bodies are parsed as JSON whatever their Content-Type says (curl's default is form
  // encoding); a parse failure is answered by the route in the route's own shape.
  installJsonBodyParser(app);
  app.addHook('onRequest', checkApiKey(options.authenticator, admission));

  // One histogram child per path, bound once: labelling on every request costs more than observing.
  const durations = new Map<string, ReturnType<typeof requestDuration.labels>>();
  app.addHook('onResponse', async (request, reply) => {
    const path = request.routeOptions.url;
    if (path === undefined) return;
    let child = durations.get(path);
    if (child === undefined) durations.set(path, (child = requestDuration.labels({ path })));
    child.observe(reply.elapsedTime / 1000);
  });

  const { answerRpc, answerBatch } = createRouteHandlers(options, app.log);
  const failed = (path: '/' | '/submit-batch', error: unknown) => {
    app.log.error({ err: error }, 'request failed unexpectedly');
    return refuseOnPath(path, slipwayError('INTERNAL_ERROR', 'Internal error: the request could not be completed'));
  };
  const routes = { '/': answerRpc, '/submit-batch': answerBatch };
  if (options.leanHttp) {
    lean = createLeanHttp({
      authenticator: options.authenticator,
      admission,
      bodyLimit: BODY_LIMIT_BYTES,
      idleTimeoutMs: options.idleTimeoutMs,
      headersTimeoutMs: options.headersTimeoutMs,
      routes,
      failed,
    });
  }
  fast = createFastPath({
    authenticator: options.authenticator,
    admitKey: (keyId, request, response) => {
      const busy = admission.admitKey(keyId, response);
      if (busy !== null) answerAtOnce(request, response, busy, false);
      return busy === null;
    },
    bodyLimit: BODY_LIMIT_BYTES,
    routes,
    failed,
  });

  for (const path of JSON_RPC_PATHS) {
    app.post(path, async (request, reply) =>
      sendReply(reply, await answerRpc(request.body, request.apiKey!, parseAntiMev(request), metaOf(request))),
    );
  }
  app.post('/submit-batch', async (request, reply) =>
    sendReply(reply, await answerBatch(request.body, request.apiKey!, parseAntiMev(request), metaOf(request))),
  );
  registerTipFloorRoutes(app, options);
  registerOperatorRoutes(app, options);
  registerFallbacks(app, BODY_LIMIT_BYTES);
  return app;
}
