/**
 * What Fastify's routes share: writing a `Reply` through Fastify, a refusal in the route's
 * shape, and the two things read from a route's query string (the `anti_mev` switch, Jito's
 * `uuid` credential).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { quote } from '../errors/client-text';
import { slipwayError, type SlipwayError } from '../errors/error-catalogue';
import type { Reply } from '../web/json-rpc-envelope';
import type { RequestMeta } from './fast-path';
import { refuseOnPath } from './refusal-replies';

export function sendReply(reply: FastifyReply, answer: Reply): FastifyReply {
  if (answer.headers !== undefined) reply.headers(answer.headers);
  return answer.body === undefined ? reply.code(answer.status).send() : reply.code(answer.status).send(answer.body);
}

export function refuse(request: FastifyRequest, reply: FastifyReply, error: SlipwayError): FastifyReply {
  return sendReply(reply, refuseOnPath(request.routeOptions.url, error));
}

/** Jito clients carry their credential in `x-jito-auth` or in the `uuid` query parameter. */
export function jitoCredential(request: FastifyRequest): string | string[] | undefined {
  return request.headers['x-jito-auth'] ?? (request.query as Record<string, string | string[] | undefined>).uuid;
}

/** What the answer needs of a Fastify request besides its body (the fast path reads the same from node:http). */
export const metaOf = (request: FastifyRequest): RequestMeta => ({
  requestId: request.id,
  idempotencyKey: request.headers['idempotency-key'],
});

export function parseAntiMev(request: FastifyRequest): boolean | SlipwayError {
  const value = (request.query as Record<string, unknown>).anti_mev;
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  return slipwayError(
    'INVALID_PARAMS',
    `the anti_mev query parameter must be 1 or true (protection on), or 0 or false (off); got ${quote(value)}`,
  );
}
