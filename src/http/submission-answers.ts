/**
 * What `POST /` (and the Jito paths) and `POST /submit-batch` answer to a body from a key:
 * the same two functions serve the fast path and Fastify's routes, so the two cannot drift
 * apart. The submission desk answers submissions and alone counts and logs their outcomes.
 */
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { slipwayError } from '../errors/error-catalogue';
import { checkJsonBody } from '../web/json-body';
import { createIdempotency, parseIdempotencyKey, REPLAYED_HEADERS, type IdempotencyOptions } from './idempotency';
import type { Answerer } from './fast-path';
import { createJsonRpcHandler, type JsonRpcHandlerOptions } from './json-rpc-handler';
import { refusal } from './refusal-replies';
import { createSubmissionDesk, type SubmissionDeskOptions, type SubmissionOutcome } from './submission-desk';

export type SubmissionAnswersOptions = Omit<JsonRpcHandlerOptions, 'logError' | 'desk'> &
  Omit<SubmissionDeskOptions, 'logSubmission' | 'idempotency'> & {
    readonly idempotency: Omit<IdempotencyOptions, 'logError'>;
  };

export function createSubmissionAnswers(
  options: SubmissionAnswersOptions,
  log: FastifyBaseLogger,
): { readonly answerRpc: Answerer; readonly answerBatch: Answerer } {
  // One info line per submission outcome (never the transaction or the key).
  const idempotency = createIdempotency({ ...options.idempotency, logError: (error, what) => log.error({ err: error }, what) });
  // The level is fixed for the process's life: below info, no line is made at all.
  const logSubmission =
    (pino.levels.values[log.level] ?? Infinity) <= pino.levels.values.info!
      ? (outcome: SubmissionOutcome) => log.info(outcome, 'submission')
      : null;
  const desk = createSubmissionDesk({ ...options, idempotency, logSubmission });
  const handleRpc = createJsonRpcHandler({
    ...options,
    desk,
    logError: (error, method) => log.error({ err: error, method }, 'request failed unexpectedly'),
  });
  return {
    answerRpc: async (body, key, antiMev, { requestId, idempotencyKey: header }) => {
      const unreadable = checkJsonBody(body);
      if (unreadable !== null) return refusal('/', unreadable);
      if (typeof antiMev !== 'boolean') return refusal('/', antiMev);
      const idempotencyKey = parseIdempotencyKey(header);
      if (!idempotencyKey.ok) return refusal('/', idempotencyKey.error);
      if (idempotencyKey.value !== undefined && Array.isArray(body)) {
        return refusal(
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
          ? desk.refuse('submitBatch', request, unreadable)
          : typeof antiMev !== 'boolean'
            ? desk.refuse('submitBatch', request, antiMev)
            : !idempotencyKey.ok
              ? desk.refuse('submitBatch', request, idempotencyKey.error)
              : await desk.submitBatch(body, request);
      if (!submitted.ok) return refusal('/submit-batch', submitted.error);
      const answer = { status: 200, body: { code: 1, message: 'success', signatures: submitted.value } };
      return 'replayed' in submitted && submitted.replayed === true ? { ...answer, headers: REPLAYED_HEADERS } : answer;
    },
  };
}
