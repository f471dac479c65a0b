/**
 * A request id for every request, echoed in the `x-request-id` response header and carried
 * by every log line about the request: the client's own id when it sends an acceptable one
 * (so ids can follow a request across systems), else one of this process's (a random
 * prefix per start and a counter: unique, and cheap enough for the hot path).
 */
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const ID = Symbol('slipway.requestId');
const PREFIX = crypto.randomBytes(4).toString('hex');
/** What a client's id may look like: short, and nothing a log or a header could be confused by. */
const ACCEPTABLE = /^[\w.:-]{1,64}$/;
let counter = 0;

type WithId = IncomingMessage & { [ID]?: string };

/** The client's id when acceptable, else a new one of this process's. */
export function requestIdFor(given: string | string[] | undefined): string {
  return typeof given === 'string' && ACCEPTABLE.test(given) ? given : `${PREFIX}-${(++counter).toString(36)}`;
}

export function assignRequestId(request: IncomingMessage, response: ServerResponse): string {
  const id = requestIdFor(request.headers['x-request-id']);
  (request as WithId)[ID] = id;
  response.setHeader('x-request-id', id);
  return id;
}

export const requestIdOf = (request: IncomingMessage): string => (request as WithId)[ID] ?? 'none';
