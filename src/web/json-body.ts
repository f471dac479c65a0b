/**
 * Request bodies as JSON, for every Fastify app of Slipway's (the gateway and the ledger
 * node): read whatever the Content-Type says (curl's default is form encoding), and leave
 * what cannot be read to the route, which refuses it in its own shape (`checkJsonBody`).
 */
import type { FastifyInstance } from 'fastify';
import type { SlipwayError } from '../errors/error-catalogue';
import { slipwayError } from '../errors/error-catalogue';

const PARSE_FAILED = Symbol('parse failed');
const COMPRESSED = Symbol('compressed body');
const TOO_DEEP = Symbol('nested too deep');

/** How deep a request's JSON may nest: a JSON-RPC batch of requests with config objects needs 5. */
export const MAX_JSON_DEPTH = 32;

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  // Fastify refuses a Content-Type it cannot read as a media type (`foo`, no slash) with a
  // 415 of its own before any parser runs, where the fast path reads the body whatever the
  // header says. One rule everywhere: the header is set aside, so every body reaches the
  // catch-all parser below (and its size limit) as it does on the fast path.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.headers['content-type'] !== undefined) delete request.raw.headers['content-type'];
    done();
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    done(null, isUncompressed(request.headers['content-encoding']) ? parseJsonBody(body as string) : COMPRESSED);
  });
}

/**
 * Whether a Content-Encoding header leaves the body as sent: none, an empty list, or only
 * `identity`, in any case (content codings are case-insensitive, RFC 9110 §8.4.1; node:http
 * joins a repeated header with ", ").
 */
export function isUncompressed(encoding: string | string[] | undefined): boolean {
  if (encoding === undefined || encoding === 'identity') return true;
  if (typeof encoding !== 'string') return false;
  return encoding.split(',').every((coding) => {
    const name = coding.trim().toLowerCase();
    return name === '' || name === 'identity';
  });
}

/** An uncompressed body's text as JSON: undefined when empty, a marker `checkJsonBody` refuses when not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return PARSE_FAILED;
  }
  return nestsDeeper(value, MAX_JSON_DEPTH) ? TOO_DEEP : value;
}

/** Whether `value` nests more than `limit` levels of arrays and objects (stops looking as soon as it does). */
function nestsDeeper(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeper(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) if (nestsDeeper((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}

/** Why the parsed body cannot be served, or null when it is JSON. */
export function checkJsonBody(body: unknown): SlipwayError | null {
  if (body === PARSE_FAILED) return slipwayError('PARSE_ERROR', 'Parse error: the body is not valid JSON');
  if (body === TOO_DEEP) return slipwayError('INVALID_REQUEST', `Invalid Request: the JSON nests more than ${MAX_JSON_DEPTH} levels deep`);
  if (body === COMPRESSED)
    return slipwayError('UNSUPPORTED_ENCODING', 'compressed bodies are not accepted: send the JSON uncompressed (no Content-Encoding)');
  if (body === undefined) return slipwayError('PARSE_ERROR', 'Parse error: the body is empty: send a JSON request');
  return null;
}
