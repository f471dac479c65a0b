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

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') return done(null, COMPRESSED);
    done(null, parseJsonBody(body as string));
  });
}

/** An uncompressed body's text as JSON: undefined when empty, a marker `checkJsonBody` refuses when not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return PARSE_FAILED;
  }
}

/** Why the parsed body cannot be served, or null when it is JSON. */
export function checkJsonBody(body: unknown): SlipwayError | null {
  if (body === PARSE_FAILED) return slipwayError('PARSE_ERROR', 'Parse error: the body is not valid JSON');
  if (body === COMPRESSED) return slipwayError('UNSUPPORTED_ENCODING', 'compressed bodies are not accepted: send the JSON uncompressed (no Content-Encoding)');
  if (body === undefined) return slipwayError('PARSE_ERROR', 'Parse error: the body is empty: send a JSON request');
  return null;
}
