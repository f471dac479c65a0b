/**
 * JSON-RPC 2.0 over HTTP for `/` and the Jito-style paths: envelopes, batches (a JSON
 * array), notifications (no `id`: executed, not answered), and dispatch to the pipeline
 * or, for methods Slipway does not own (reads, statuses), to the router.
 *
 * JSON-RPC errors travel with HTTP 200, as on a Solana node, so that standard clients
 * surface the message; the only other statuses are 401/403 for a single request.
 */
import type { SlipwayError } from '../errors/error-catalogue';
import { ERROR_CATALOGUE, slipwayError, toJsonRpcError } from '../errors/error-catalogue';
import { refusalsTotal } from '../metrics/metrics';
import type { RecentTransactions } from '../pipeline/recent-transactions';
import type { Router } from '../pipeline/router';
import type { SubmissionContext, SubmissionPipeline } from '../pipeline/submission-pipeline';
import type { ApiKeyRecord } from '../stores/key-store';
import { parseSendBundleParams, parseSendTransactionParams } from './submission-params';

/** Requests in one JSON-RPC batch; a larger batch is refused whole. */
export const MAX_JSON_RPC_BATCH = 100;

export type JsonRpcId = number | string | null;

export interface RpcCallContext {
  readonly key: ApiKeyRecord;
  readonly antiMev: boolean;
}

/** What to send back: a body (undefined when only notifications were sent) and its HTTP status. */
export interface RpcReply {
  readonly status: number;
  readonly body: unknown;
}

export interface JsonRpcHandlerOptions {
  readonly pipeline: SubmissionPipeline;
  readonly router: Router;
  readonly recent: RecentTransactions;
  /** `sendBundle`'s result: the bundle ID (default) or the array of signatures. */
  readonly bundleResult: 'id' | 'signatures';
  /** Where unexpected failures go; the client only learns that the request failed. */
  readonly logError: (error: unknown, method: string) => void;
}

export const errorResponse = (id: JsonRpcId, error: SlipwayError) => {
  refusalsTotal.inc({ kind: error.kind });
  return { jsonrpc: '2.0', error: toJsonRpcError(error), id };
};

const resultResponse = (id: JsonRpcId, result: unknown) => ({ jsonrpc: '2.0', result, id });

const describeMethod = (method: string) => (method.length > 64 ? `${method.slice(0, 64)}…` : method);

export function createJsonRpcHandler({ pipeline, router, recent, bundleResult, logError }: JsonRpcHandlerOptions) {
  async function dispatch(id: JsonRpcId, method: string, params: readonly unknown[], context: RpcCallContext): Promise<{ status: number; body: unknown }> {
    const submission: SubmissionContext = { keyId: context.key.id, antiMev: context.antiMev };
    switch (method) {
      case 'sendTransaction': {
        const input = parseSendTransactionParams(params, recent);
        if (!input.ok) return { status: 200, body: errorResponse(id, input.error) };
        const sent = await pipeline.sendTransaction(input.value.transaction, input.value.options, submission);
        return { status: 200, body: sent.ok ? resultResponse(id, sent.value) : errorResponse(id, sent.error) };
      }
      case 'sendBundle': {
        if (!context.key.bundle) {
          const error = slipwayError(
            'FORBIDDEN',
            `API key ${context.key.id} may not call sendBundle: bundles are enabled per key (bin/slipway keys set ${context.key.id} --bundle on)`,
          );
          return { status: ERROR_CATALOGUE.FORBIDDEN.http, body: errorResponse(id, error) };
        }
        const txs = parseSendBundleParams(params, recent);
        if (!txs.ok) return { status: 200, body: errorResponse(id, txs.error) };
        const sent = await pipeline.sendBundle(txs.value, submission);
        if (!sent.ok) return { status: 200, body: errorResponse(id, sent.error) };
        return { status: 200, body: resultResponse(id, bundleResult === 'id' ? sent.value.bundleId : sent.value.signatures) };
      }
      default: {
        const answer = await router.call(method, params);
        if (answer === undefined) {
          return { status: 200, body: errorResponse(id, slipwayError('METHOD_NOT_FOUND', `Method not found: ${describeMethod(method)}`)) };
        }
        return { status: 200, body: 'result' in answer ? resultResponse(id, answer.result) : { jsonrpc: '2.0', error: answer.error, id } };
      }
    }
  }

  /** One request object; `body` is undefined for a notification. */
  async function handleOne(request: unknown, context: RpcCallContext): Promise<{ status: number; body: unknown }> {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      return { status: 200, body: errorResponse(null, slipwayError('INVALID_REQUEST', 'Invalid Request: expected a JSON-RPC 2.0 request object')) };
    }
    const r = request as Record<string, unknown>;
    const isNotification = !('id' in r);
    const id = r.id;
    if (!isNotification && id !== null && typeof id !== 'number' && typeof id !== 'string') {
      return { status: 200, body: errorResponse(null, slipwayError('INVALID_REQUEST', 'Invalid Request: id must be a number, a string or null')) };
    }
    const rid = (id ?? null) as JsonRpcId;
    if (r.jsonrpc !== '2.0') return { status: 200, body: errorResponse(rid, slipwayError('INVALID_REQUEST', 'Invalid Request: jsonrpc must be "2.0"')) };
    if (typeof r.method !== 'string') {
      return { status: 200, body: errorResponse(rid, slipwayError('INVALID_REQUEST', 'Invalid Request: method must be a string')) };
    }
    const params = r.params ?? [];
    if (!Array.isArray(params)) {
      return { status: 200, body: errorResponse(rid, slipwayError('INVALID_PARAMS', 'params must be an array: Solana methods take positional params')) };
    }
    let reply: { status: number; body: unknown };
    try {
      reply = await dispatch(rid, r.method, params, context);
    } catch (error) {
      logError(error, describeMethod(r.method));
      reply = { status: 200, body: errorResponse(rid, slipwayError('INTERNAL_ERROR', 'Internal error: the request could not be completed')) };
    }
    return isNotification ? { status: 200, body: undefined } : reply;
  }

  return async function handle(body: unknown, context: RpcCallContext): Promise<RpcReply> {
    if (!Array.isArray(body)) {
      const reply = await handleOne(body, context);
      return reply.body === undefined ? { status: 204, body: undefined } : reply;
    }
    if (body.length === 0) return { status: 200, body: errorResponse(null, slipwayError('INVALID_REQUEST', 'Invalid Request: the batch is empty')) };
    if (body.length > MAX_JSON_RPC_BATCH) {
      return {
        status: 200,
        body: errorResponse(null, slipwayError('INVALID_REQUEST', `Invalid Request: the batch has ${body.length} requests; at most ${MAX_JSON_RPC_BATCH}`)),
      };
    }
    const replies = await Promise.all(body.map((request) => handleOne(request, context)));
    const bodies = replies.map((reply) => reply.body).filter((b) => b !== undefined);
    return bodies.length === 0 ? { status: 204, body: undefined } : { status: 200, body: bodies };
  };
}
