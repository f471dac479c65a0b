/**
 * The two hot routes, `POST /` and `POST /submit-batch`, served on `node:http` directly
 * (for the requests lean HTTP, lean-http.ts, does not read off the socket itself),
 * without Fastify's request and reply objects, hooks and serializer (about 6 µs a request,
 * measured against a bare server, of a budget of a few tens). It serves only requests whose
 * headers need nothing else: an exact path (no query string), a Content-Length within the
 * body limit, an uncompressed body, a Content-Type, and a valid `x-api-key`. Everything else
 * goes to Fastify untouched, which answers it as before; a test sends the same requests both
 * ways and compares the answers.
 *
 * The answers are made by the same functions as Fastify's routes (`answerRpc`,
 * `answerBatch` in route-handlers.ts), so the paths cannot drift apart.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../auth/authenticator';
import type { SlipwayError } from '../errors/error-catalogue';
import { hotCount, hotSeries } from '../metrics/hot-series';
import { fastPathRequestsTotal, REQUEST_DURATION_BUCKETS, requestDuration } from '../metrics/metrics';
import type { ApiKeyRecord } from '../stores/key-store';
import type { Reply } from '../web/json-rpc-envelope';
import { isUncompressed, parseJsonBody } from '../web/json-body';
import { requestIdOf } from './request-id';

/** What an answer needs of the request besides its body: its id, and its Idempotency-Key header as sent (unchecked). */
export interface RequestMeta {
  readonly requestId: string;
  readonly idempotencyKey: string | string[] | undefined;
}

export type Answerer = (body: unknown, key: ApiKeyRecord, antiMev: boolean | SlipwayError, meta: RequestMeta) => Promise<Reply>;

export interface FastPathOptions {
  readonly authenticator: Authenticator;
  /** Counts the request against its key's requests in progress, or answers it (and returns false). */
  readonly admitKey: (keyId: string, request: IncomingMessage, response: ServerResponse) => boolean;
  readonly bodyLimit: number;
  readonly routes: { readonly '/': Answerer; readonly '/submit-batch': Answerer };
  /** The answer to an unexpected failure, in the path's shape (after logging it). */
  readonly failed: (path: '/' | '/submit-batch', error: unknown) => Reply;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes an answer on node:http: its JSON (none for 204) and headers. */
export function writeAnswer(response: ServerResponse, { status, body, headers }: Reply): void {
  if (body === undefined) {
    response.writeHead(status, headers).end();
    return;
  }
  const json = JSON.stringify(body);
  response.writeHead(status, { ...headers, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(json) }).end(json);
}

/** Serves the request and returns true, or returns false (having read nothing) to leave it to Fastify. */
export function createFastPath({ authenticator, admitKey, bodyLimit, routes, failed }: FastPathOptions) {
  const durations = {
    '/': hotSeries(requestDuration, REQUEST_DURATION_BUCKETS, { path: '/' }),
    '/submit-batch': hotSeries(requestDuration, REQUEST_DURATION_BUCKETS, { path: '/submit-batch' }),
  };
  const fastPathRequests = hotCount(fastPathRequestsTotal);
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const path = request.url;
    if (request.method !== 'POST' || (path !== '/' && path !== '/submit-batch')) return false;
    const { headers } = request;
    const length = Number(headers['content-length']);
    if (!(length <= bodyLimit) || headers['transfer-encoding'] !== undefined || headers['content-type'] === undefined) return false;
    if (!isUncompressed(headers['content-encoding'])) return false;
    const presented = headers['x-api-key'];
    const key = typeof presented === 'string' ? authenticator.authenticate(presented) : null;
    if (key === null) return false;
    if (!admitKey(key.id, request, response)) return true;

    const started = process.hrtime.bigint();
    fastPathRequests.inc();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      routes[path](parseJsonBody(text), key, false, { requestId: requestIdOf(request), idempotencyKey: headers['idempotency-key'] })
        .catch((error: unknown) => failed(path, error))
        .then((answer) => {
          writeAnswer(response, answer);
          durations[path].observe(Number(process.hrtime.bigint() - started) / 1e9);
        })
        // An answer that cannot be written (the connection is gone) ends that connection, never the process.
        .catch(() => response.destroy());
    });
    return true;
  };
}
