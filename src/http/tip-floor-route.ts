/**
 * `GET /api/v1/bundles/tip_floor` in Jito's shape: a JSON array holding the current entry
 * (advice/tip-floor-reader.ts: Slipway's own, or the engine's with `tipFloorUrl`), or an empty
 * array when no bundle landed in the window and no engine answered. A key is needed as on
 * every path but the operator's (key-check.ts), and each request counts one read against it.
 * HEAD is answered as GET without the body; other methods get 405 naming GET, and a query
 * parameter other than the key's is refused by name. `GET /api/v1/bundles/tip_stream` without
 * a WebSocket handshake is told to make one (426).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TipFloorReader } from '../advice/tip-floor-reader';
import { quote } from '../errors/client-text';
import { slipwayError, type SlipwayError } from '../errors/error-catalogue';
import type { KeyLimits } from '../limits/key-limits';
import { refuseOnPath } from './refusal-replies';
import { refuse, sendReply } from './route-replies';
import { TIP_FLOOR_PATH, TIP_STREAM_PATH } from './tip-floor-paths';

/** The query parameters a tip floor request may carry: its key (`api-key`, or Jito's `uuid`). */
const KEY_PARAMETERS = new Set(['api-key', 'uuid']);
const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export interface TipFloorRouteOptions {
  readonly tipFloor: TipFloorReader;
  readonly limits: Pick<KeyLimits, 'reads'>;
}

export function registerTipFloorRoutes(app: FastifyInstance, options: TipFloorRouteOptions): void {
  app.get(TIP_FLOOR_PATH, async (request, reply) => {
    const stray = Object.keys(request.query as object).find((name) => !KEY_PARAMETERS.has(name));
    if (stray !== undefined)
      return refuse(
        request,
        reply,
        slipwayError('INVALID_PARAMS', `tip_floor takes no query parameter but the API key (api-key); got ${quote(stray)}`),
      );
    const reads = await options.limits.reads(request.apiKey!, 1);
    if (!reads.ok) return refuse(request, reply, reads.error);
    const entry = await options.tipFloor.current(Date.now());
    return reply.header('cache-control', 'no-store').send(entry === null ? [] : [entry]);
  });
  app.route({
    method: [...OTHER_METHODS],
    url: TIP_FLOOR_PATH,
    handler: (request, reply) =>
      refuseWithStatus(
        reply,
        TIP_FLOOR_PATH,
        405,
        slipwayError('INVALID_REQUEST', `${request.method} is not served on ${TIP_FLOOR_PATH}: read the tip floor with GET`),
        { allow: 'GET, HEAD' },
      ),
  });
  app.get(TIP_STREAM_PATH, (_request, reply) =>
    refuseWithStatus(
      reply,
      TIP_STREAM_PATH,
      426,
      slipwayError('INVALID_REQUEST', `${TIP_STREAM_PATH} is a WebSocket stream: open it with a WebSocket handshake (ws:// or wss://)`),
      { upgrade: 'websocket' },
    ),
  );
}

/** A refusal in the path's shape with an HTTP status of its own (the catalogue's kinds have none for 405 and 426). */
function refuseWithStatus(
  reply: FastifyReply,
  path: string,
  status: number,
  error: SlipwayError,
  headers: Readonly<Record<string, string>>,
): FastifyReply {
  const answer = refuseOnPath(path, error);
  return sendReply(reply, { ...answer, status, headers: { ...answer.headers, ...headers } });
}
