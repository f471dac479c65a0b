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

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null;
  }
}

export const JITO_PATHS = new Set(['/api/v1/transactions', '/api/v1/bundles']);

export function checkApiKey(authenticator: Authenticator, admission: Admission) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (request.routeOptions.url === undefined || OPERATOR_PATHS.has(request.routeOptions.url)) return;
    const key =
      request.headers['x-api-key'] ??
      (JITO_PATHS.has(request.routeOptions.url) ? jitoCredential(request) : undefined) ??
      (request.query as Record<string, string | string[] | undefined>)['api-key'];
    const presented = Array.isArray(key) ? key[0] : key;
    const record = authenticator.authenticate(presented);
    if (record === null) {
      const down = authenticator.unavailable();
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
  };
}
