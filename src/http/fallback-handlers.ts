/**
 * What Fastify answers when no route does: an unknown path or method (404, naming what is
 * served, the client's text clipped), and a failure inside Fastify itself — a body too
 * large, unreadable, or an unexpected error — in Slipway's refusal shape, never a stack trace.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { clip } from '../errors/client-text';
import { slipwayError, type ErrorKind } from '../errors/error-catalogue';
import { refuse } from './route-replies';

/** How much of a refused body is read and dropped so that its client sees the refusal. */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

function drain(request: IncomingMessage): void {
  let drained = 0;
  request.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAINED_BYTES) request.socket.destroy();
  });
  request.resume();
}

export function registerFallbacks(app: FastifyInstance, bodyLimit: number): void {
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      code: 404,
      message:
        `no route for ${clip(request.method, 16)} ${clip(request.url.split('?')[0]!)}; Slipway serves POST /, POST /submit-batch, ` +
        'POST /api/v1/transactions, POST /api/v1/bundles, GET /api/v1/bundles/tip_floor, GET /health, GET /metrics and GET /dashboard',
    });
  });

  app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) app.log.error({ err: error }, 'request failed unexpectedly');
    if (status === 413 && !(Number(request.headers['content-length']) > MAX_DRAINED_BYTES)) {
      // Fastify answers a body too large with `Connection: close` before reading it: a client
      // still writing its body (a few MB) then sees a broken pipe instead of this answer.
      // The rest of the body is read and dropped instead, within the request time-out and
      // up to MAX_DRAINED_BYTES (past it the connection is cut: no client sends that much).
      reply.removeHeader('connection');
      drain(request.raw);
    }
    const kind: ErrorKind = status === 413 ? 'BODY_TOO_LARGE' : status < 500 ? 'INVALID_REQUEST' : 'INTERNAL_ERROR';
    const message =
      status === 413
        ? `the request body is larger than ${bodyLimit} bytes`
        : status < 500
          ? `bad request: ${clip(error.message, 200)}`
          : 'Internal error: the request could not be completed';
    return refuse(request, reply, slipwayError(kind, message));
  });
}
