/**
 * What `POST /` (and the Jito paths) and `POST /submit-batch` answer to a body from a key:
 * the same two functions serve the fast path and Fastify's routes, so the two cannot drift
 * apart. The submission service answers submissions and alone counts and logs their outcomes.
 */
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { ok, slipwayError } from '../errors/error-catalogue';
import { checkJsonBody } from '../web/json-body';
import type { JsonRpcId } from '../web/json-rpc-envelope';
import { answered, createIdempotency, parseIdempotencyKey, type IdempotencyOptions } from './idempotency';
import type { Answerer } from './fast-path';
import { createJsonRpcHandler, type JsonRpcHandlerOptions } from './json-rpc-handler';
import { refuseOnPath, refuseJsonRpc } from './refusal-replies';
import { createSubmissionService, type SubmissionServiceOptions, type SubmissionOutcome } from './submission-service';

export type RouteHandlersOptions = Omit<JsonRpcHandlerOptions, 'logError' | 'service'> &
  Omit<SubmissionServiceOptions, 'logSubmission' | 'idempotency'> & {
    readonly idempotency: Omit<IdempotencyOptions, 'logError'>;
  };

export function createRouteHandlers(
  options: RouteHandlersOptions,
  log: FastifyBaseLogger,
): { readonly answerRpc: Answerer; readonly answerBatch: Answerer } {
  // One info line per submission outcome (never the transaction or the key).
  const idempotency = createIdempotency({ ...options.idempotency, logError: (error, what) => log.error({ err: error }, what) });
  // The level is fixed for the process's life: below info, no line is made at all.
  const logSubmission =
    (pino.levels.values[log.level] ?? Infinity) <= pino.levels.values.info!
      ? (outcome: SubmissionOutcome) => log.info(outcome, 'submission')
      : null;
  const service = createSubmissionService({ ...options, idempotency, logSubmission });
  const handleRpc = createJsonRpcHandler({
    ...options,
    service,
    logError: (error, method) => log.error({ err: error, method }, 'request failed unexpectedly'),
  });
  return {
    answerRpc: async (body, key, antiMev, { requestId, idempotencyKey: header }) => {
      const unreadable = checkJsonBody(body);
      if (unreadable !== null) return refuseOnPath('/', unreadable);
      // The body was read: a refusal of the whole request carries its id, as the method's own would.
      if (typeof antiMev !== 'boolean') return refuseJsonRpc(idOf(body), antiMev);
      // Reads ignore the header; a submission (or a batch, which may hold one) needs it well formed.
      const idempotencyKey = isRead(body) ? ok(undefined) : parseIdempotencyKey(header);
      if (!idempotencyKey.ok) return refuseJsonRpc(idOf(body), idempotencyKey.error);
      if (idempotencyKey.value !== undefined && Array.isArray(body)) {
        return refuseOnPath(
          '/',
          slipwayError(
            'INVALID_REQUEST',
            'An Idempotency-Key names one submission: send it with one sendTransaction or sendBundle, not a JSON-RPC batch; nothing was sent',
          ),
        );
      }
      const reply = await handleRpc(body, { key, antiMev, requestId, idempotencyKey: idempotencyKey.value });
      return reply.status === 204 ? { status: 204 } : reply;
    },
    answerBatch: async (body, key, antiMev, { requestId, idempotencyKey: header }) => {
      const idempotencyKey = parseIdempotencyKey(header);
      const request = { key, antiMev: antiMev === true, requestId, idempotencyKey: idempotencyKey.ok ? idempotencyKey.value : undefined };
      const unreadable = checkJsonBody(body);
      const submitted =
        unreadable !== null
          ? service.refuse('submitBatch', request, unreadable)
          : typeof antiMev !== 'boolean'
            ? service.refuse('submitBatch', request, antiMev)
            : !idempotencyKey.ok
              ? service.refuse('submitBatch', request, idempotencyKey.error)
              : await service.submitBatch(body, request);
      if (!submitted.ok) return refuseOnPath('/submit-batch', submitted.error);
      return answered({ code: 1, message: 'success', signatures: submitted.value.value }, submitted.value);
    },
  };
}

/** Methods that submit (an Idempotency-Key applies to them); every other method reads. */
const SUBMISSIONS = new Set(['sendTransaction', 'sendBundle']);

/** Whether the body is one JSON-RPC request of a method that reads. */
function isRead(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const { method } = body as { method?: unknown };
  return typeof method === 'string' && !SUBMISSIONS.has(method);
}

/** The id of a single request's body, when it is one an answer can carry; null otherwise (a batch, no id). */
function idOf(body: unknown): JsonRpcId {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { id } = body as { id?: unknown };
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
