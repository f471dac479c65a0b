/**
 * Fastify's `onRequest` hook for every path but the operator's: the API key (from
 * `x-api-key`, Jito's credential on the Jito paths, or `?api-key=`), then the key's places in
 * flight. The fast path makes the same checks on its own (fast-path.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import { slipwayError } from '../errors/error-catalogue';
import type { ApiKeyRecord } from '../stores/key-store';
import { OPERATOR_PATHS } from '../web/operator-access';
import type { Admission } from './admission';
import { jitoCredential, refuse } from './route-replies';
import { TIP_FLOOR_PATH, TIP_STREAM_PATH } from './tip-floor-paths';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null;
  }
}

export const JITO_PATHS = new Set(['/api/v1/transactions', '/api/v1/bundles', TIP_FLOOR_PATH, TIP_STREAM_PATH]);

export function checkApiKey(authenticator: Authenticator, admission: Admission) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (request.routeOptions.url === undefined || OPERATOR_PATHS.has(request.routeOptions.url)) return;
    const presented = presentedKey(request);
    const record = authenticator.authenticate(presented);
    if (record === null) {
      const down = authenticator.unavailable();
      if (down !== null) return refuse(request, reply, slipwayError('STORE_UNAVAILABLE', down, { retryAfterMs: 1_000 }));
      return refuse(request, reply, slipwayError('UNAUTHORIZED', whyRefused(request, presented)));
    }
    request.apiKey = record;
    const busy = admission.admitKey(record.id, reply.raw);
    if (busy !== null) return refuse(request, reply, busy);
  };
}

/**
 * The key a request presents: the first non-empty of `x-api-key`, Jito's credential (on the
 * Jito paths) and `?api-key=`. An empty header is no key, so a key in the query beside it is read.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const sources = [
    request.headers['x-api-key'],
    JITO_PATHS.has(request.routeOptions.url!) ? jitoCredential(request) : undefined,
    (request.query as Record<string, string | string[] | undefined>)['api-key'],
  ];
  for (const source of sources) {
    // `?api-key=a&api-key=b` comes as a list: joined, as node:http joins a repeated header, it is no key.
    const value = Array.isArray(source) ? source.join(', ') : source;
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

/** Why no key was found for a request. */
function whyRefused(request: FastifyRequest, presented: string | undefined): string {
  if (presented === undefined) return 'missing API key: send it in the x-api-key header';
  // node:http joins repeated headers ("k, k"): a header sent twice is refused as such, not as an unknown key.
  if (timesSent(request.raw.rawHeaders, 'x-api-key') > 1) return 'x-api-key was sent more than once: send the x-api-key header once';
  if (Array.isArray((request.query as Record<string, unknown>)['api-key']))
    return 'api-key was given more than once in the query: give ?api-key= once';
  return 'invalid API key: it is unknown or has been revoked';
}

function timesSent(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) count += 1;
  return count;
}
