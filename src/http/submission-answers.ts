/**
 * What `POST /` (and the Jito paths) and `POST /submit-batch` answer to a body from a key:
 * the same two functions serve the fast path and Fastify's routes, so the two cannot drift
 * apart. The submission desk answers submissions and alone counts and logs their outcomes.
 */
import type { FastifyBaseLogger } from 'fastify';
import { checkJsonBody } from '../web/json-body';
import type { Answerer } from './fast-path';
import { createJsonRpcHandler, type JsonRpcHandlerOptions } from './json-rpc-handler';
import { refusal } from './refusal-replies';
import { createSubmissionDesk, type SubmissionDeskOptions } from './submission-desk';

export type SubmissionAnswersOptions = Omit<JsonRpcHandlerOptions, 'logError' | 'desk'> & Omit<SubmissionDeskOptions, 'logSubmission'>;

export function createSubmissionAnswers(
  options: SubmissionAnswersOptions,
  log: FastifyBaseLogger,
): { readonly answerRpc: Answerer; readonly answerBatch: Answerer } {
  // One info line per submission outcome (never the transaction or the key).
  const desk = createSubmissionDesk({ ...options, logSubmission: (outcome) => log.info(outcome, 'submission') });
  const handleRpc = createJsonRpcHandler({
    ...options,
    desk,
    logError: (error, method) => log.error({ err: error, method }, 'request failed unexpectedly'),
  });
  return {
    answerRpc: async (body, key, antiMev, requestId) => {
      const unreadable = checkJsonBody(body);
      if (unreadable !== null) return refusal('/', unreadable);
      if (typeof antiMev !== 'boolean') return refusal('/', antiMev);
      const reply = await handleRpc(body, { key, antiMev, requestId });
      return reply.status === 204 ? { status: 204 } : reply;
    },
    answerBatch: async (body, key, antiMev, requestId) => {
      const request = { key, antiMev: antiMev === true, requestId };
      const unreadable = checkJsonBody(body);
      const submitted =
        unreadable !== null
          ? desk.refuse('submitBatch', request, unreadable)
          : typeof antiMev !== 'boolean'
            ? desk.refuse('submitBatch', request, antiMev)
            : await desk.submitBatch(body, request);
      if (!submitted.ok) return refusal('/submit-batch', submitted.error);
      return { status: 200, body: { code: 1, message: 'success', signatures: submitted.value } };
    },
  };
}
