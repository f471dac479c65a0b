/**
 * JSON-RPC 2.0 envelopes over HTTP, independent of the methods served: single requests,
 * batches (a JSON array, answered in order), notifications (no `id`: executed, not
 * answered; HTTP 204 when nothing is left to answer). Used by the gateway and by the
 * standalone ledger node. Nothing here counts or logs: the server that uses it does.
 */
import { clip } from '../errors/client-text';
import type { SlipwayError } from '../errors/error-catalogue';
import { ERROR_CATALOGUE, slipwayError, toJsonRpcError } from '../errors/error-catalogue';

/** Requests in one JSON-RPC batch; a larger batch is refused whole. */
export const MAX_JSON_RPC_BATCH = 100;

export type JsonRpcId = number | string | null;

/** What to send back, on any path: its HTTP status, a JSON body (none: nothing to answer, as for notifications), and any headers. */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Serves one well-formed request; answers its reply (the body is the full response object). */
export type JsonRpcDispatch<C> = (id: JsonRpcId, method: string, params: readonly unknown[], context: C) => Promise<Reply>;

export const errorResponse = (id: JsonRpcId, error: SlipwayError) => ({ jsonrpc: '2.0', error: toJsonRpcError(error), id });
const pureErrorResponse = errorResponse;

export const resultResponse = (id: JsonRpcId, result: unknown) => ({ jsonrpc: '2.0', result, id });

/** `Retry-After` (whole seconds, at least 1) for refusals that say when to try again. */
export function retryHeaders(error: SlipwayError): Readonly<Record<string, string>> | undefined {
  const data = error.data as { retryAfterMs?: unknown } | undefined;
  if (typeof data?.retryAfterMs !== 'number') return undefined;
  return { 'retry-after': String(Math.max(1, Math.ceil(data.retryAfterMs / 1000))) };
}

/**
 * A refusal of one request: HTTP 200, as Solana nodes answer JSON-RPC errors, except where
 * the catalogue gives the refusal a status of its own (429 over a rate limit, 503 when a
 * store is down), with `Retry-After` when it says when.
 */
export function errorReply(id: JsonRpcId, error: SlipwayError): Reply {
  const headers = retryHeaders(error);
  const reply = { status: ERROR_CATALOGUE[error.kind].http, body: errorResponse(id, error) };
  return headers === undefined ? reply : { ...reply, headers };
}

/**
 * Why a numeric id would not come back as sent, or null: JSON.parse reads `1e999` as
 * Infinity (written back as null) and integers past 2^53 rounded. Such an id is refused,
 * naming it, rather than answered under another id the client cannot match.
 */
export function whyIdCannotReturn(id: number): string | null {
  if (!Number.isFinite(id))
    return 'Invalid Request: the id is a number too large for JSON to carry back (it reads as infinity): send a smaller number or a string';
  if (Number.isInteger(id) && !Number.isSafeInteger(id))
    return `Invalid Request: the id ${clip(String(id))} is an integer past 2^53, which JSON does not carry back exactly: send it as a string`;
  return null;
}

/** Method names from clients end up in messages; keep them short. */
export const describeMethod = (method: string) => clip(method);

/**
 * Serves JSON-RPC bodies with `dispatch`. `refused` hears of every error the envelope itself
 * answers (not a request object, a bad id, an empty or too large batch, an exception), so
 * that a server can count them with its own.
 */
export function createJsonRpcEndpoint<C>(
  dispatch: JsonRpcDispatch<C>,
  logError: (error: unknown, method: string) => void,
  refused: (error: SlipwayError) => void = () => {},
) {
  const errorResponse = (id: JsonRpcId, error: SlipwayError) => {
    refused(error);
    return pureErrorResponse(id, error);
  };
  /** One request object; `body` is undefined for a notification (or, `alone`, its answer is a 204). */
  async function handleOne(request: unknown, context: C, alone = false): Promise<Reply> {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      return {
        status: 200,
        body: errorResponse(null, slipwayError('INVALID_REQUEST', 'Invalid Request: expected a JSON-RPC 2.0 request object')),
      };
    }
    const r = request as Record<string, unknown>;
    const isNotification = !('id' in r);
    const id = r.id;
    if (!isNotification && id !== null && typeof id !== 'number' && typeof id !== 'string') {
      return {
        status: 200,
        body: errorResponse(null, slipwayError('INVALID_REQUEST', 'Invalid Request: id must be a number, a string or null')),
      };
    }
    const unanswerable = typeof id === 'number' ? whyIdCannotReturn(id) : null;
    if (unanswerable !== null) return { status: 200, body: errorResponse(null, slipwayError('INVALID_REQUEST', unanswerable)) };
    const rid = (id ?? null) as JsonRpcId;
    if (r.jsonrpc !== '2.0')
      return { status: 200, body: errorResponse(rid, slipwayError('INVALID_REQUEST', 'Invalid Request: jsonrpc must be "2.0"')) };
    if (typeof r.method !== 'string') {
      return { status: 200, body: errorResponse(rid, slipwayError('INVALID_REQUEST', 'Invalid Request: method must be a string')) };
    }
    const params = r.params ?? [];
    if (!Array.isArray(params)) {
      return {
        status: 200,
        body: errorResponse(rid, slipwayError('INVALID_PARAMS', 'params must be an array: Solana methods take positional params')),
      };
    }
    let reply: Reply;
    try {
      reply = await dispatch(rid, r.method, params, context);
    } catch (error) {
      logError(error, describeMethod(r.method));
      reply = {
        status: 200,
        body: errorResponse(rid, slipwayError('INTERNAL_ERROR', 'Internal error: the request could not be completed')),
      };
    }
    if (isNotification) return { status: alone ? 204 : 200, body: undefined };
    return alone && reply.body === undefined ? { status: 204, body: undefined } : reply;
  }

  return function handle(body: unknown, context: C): Promise<Reply> {
    // A single request, the usual body, is answered by handleOne itself: one promise fewer.
    return Array.isArray(body) ? handleBatch(body, context) : handleOne(body, context, true);
  };

  async function handleBatch(body: unknown[], context: C): Promise<Reply> {
    if (body.length === 0)
      return { status: 200, body: errorResponse(null, slipwayError('INVALID_REQUEST', 'Invalid Request: the batch is empty')) };
    if (body.length > MAX_JSON_RPC_BATCH) {
      return {
        status: 200,
        body: errorResponse(
          null,
          slipwayError('INVALID_REQUEST', `Invalid Request: the batch has ${body.length} requests; at most ${MAX_JSON_RPC_BATCH}`),
        ),
      };
    }
    const replies = await Promise.all(body.map((request) => handleOne(request, context)));
    const bodies = replies.map((reply) => reply.body).filter((b) => b !== undefined);
    return bodies.length === 0 ? { status: 204, body: undefined } : { status: 200, body: bodies };
  }
}
