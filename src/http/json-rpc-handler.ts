/**
 * The gateway's JSON-RPC methods on `/` and the Jito-style paths: submissions go to the
 * pipeline; methods Slipway does not own (reads, statuses) go to the router.
 *
 * JSON-RPC errors travel with HTTP 200, as on a Solana node, so that standard clients
 * surface the message; the only other statuses are 401/403 for a single request.
 */
import { ERROR_CATALOGUE, ok, slipwayError, type Result, type SlipwayError } from '../errors/error-catalogue';
import { transactionsIn, type KeyLimits } from '../limits/key-limits';
import { countSubmission } from '../metrics/metrics';
import type { Router } from '../pipeline/router';
import type { RecentRefusals } from '../pipeline/recent-refusals';
import type { StatusView } from '../pipeline/status-view';
import type { SubmissionContext, SubmissionPipeline } from '../pipeline/submission-pipeline';
import type { ApiKeyRecord } from '../stores/key-store';
import type { TransactionValidator } from '../validation/transaction-validator';
import { AnswerTooLargeError } from '../upstreams/json-rpc-client';
import {
  createJsonRpcEndpoint,
  describeMethod,
  errorReply,
  errorResponse,
  resultResponse,
  type JsonRpcId,
  type RpcReply,
} from '../web/json-rpc-envelope';
import { parseSendBundleParams, parseSendTransactionParams } from './submission-params';

export interface RpcCallContext {
  readonly key: ApiKeyRecord;
  readonly antiMev: boolean;
  readonly requestId: string;
}

/** The call's context once the request's reads have been counted against the key's limit. */
interface DispatchContext extends RpcCallContext {
  readonly reads: Result<undefined>;
}

/** One log line per submission outcome: public identifiers and the refusal, never the transaction or the key. */
export interface SubmissionOutcome {
  readonly requestId: string;
  readonly operation: 'sendTransaction' | 'submitBatch' | 'sendBundle';
  readonly keyId: string;
  readonly antiMev: boolean;
  readonly outcome: 'accepted' | 'refused';
  /** Accepted: the signatures, or the bundle ID. */
  readonly signatures?: readonly string[];
  readonly bundleId?: string;
  /** Refused: the code and message the client got. */
  readonly code?: number;
  readonly error?: string;
}

export interface JsonRpcHandlerOptions {
  readonly pipeline: SubmissionPipeline;
  readonly router: Router;
  readonly validator: TransactionValidator;
  readonly statusView: StatusView;
  readonly refusals: RecentRefusals;
  /** The key's rate limits, taken before a request's transactions are parsed or verified. */
  readonly limits: KeyLimits;
  /** `sendBundle`'s result: the bundle ID (default) or the array of signatures. */
  readonly bundleResult: 'id' | 'signatures';
  /** Whether a read method is forwarded (read-methods.ts); the refusal names the setting. */
  readonly readAllowed: (method: string) => boolean;
  /** Where unexpected failures go; the client only learns that the request failed. */
  readonly logError: (error: unknown, method: string) => void;
  readonly logSubmission: (outcome: SubmissionOutcome) => void;
}

/** Status methods answered from the journal plus the upstreams. */
const STATUS_METHODS = new Set([
  'getSignatureStatuses',
  'getBundleStatuses',
  'getInflightBundleStatuses',
  'getSubmissionStatuses',
  'getSubmission',
]);

const SUBMISSION_METHODS = new Set(['sendTransaction', 'sendBundle']);
const ADMITTED = ok(undefined);

export function createJsonRpcHandler({
  pipeline,
  router,
  validator,
  statusView,
  refusals,
  limits,
  bundleResult,
  readAllowed,
  logError,
  logSubmission,
}: JsonRpcHandlerOptions) {
  async function dispatch(id: JsonRpcId, method: string, params: readonly unknown[], context: DispatchContext): Promise<RpcReply> {
    const { key } = context;
    const submission: SubmissionContext = { keyId: key.id, antiMev: context.antiMev };
    const outcome = { requestId: context.requestId, keyId: key.id, antiMev: context.antiMev };
    const refused = (operation: SubmissionOutcome['operation'], error: SlipwayError) =>
      logSubmission({ ...outcome, operation, outcome: 'refused', code: ERROR_CATALOGUE[error.kind].code, error: error.message });
    switch (method) {
      case 'sendTransaction': {
        const limited = key.tps === null ? ADMITTED : await limits.submission(key, 1, false);
        const input = limited.ok ? await parseSendTransactionParams(params, validator) : limited;
        if (!input.ok) countSubmission('sendTransaction', 'refused'); // the pipeline counts the outcomes it decides
        const sent = input.ok ? await pipeline.sendTransaction(input.value.transaction, input.value.options, submission) : input;
        if (sent.ok) {
          logSubmission({ ...outcome, operation: 'sendTransaction', outcome: 'accepted', signatures: [sent.value] });
          return { status: 200, body: resultResponse(id, sent.value) };
        }
        refused('sendTransaction', sent.error);
        refusals.record(params[0], context.key.id, sent.error.message);
        return errorReply(id, sent.error);
      }
      case 'sendBundle': {
        if (!context.key.bundle) {
          const error = slipwayError(
            'FORBIDDEN',
            `API key ${context.key.id} may not call sendBundle: bundles are enabled per key (bin/slipway keys set ${context.key.id} --bundle on)`,
          );
          refused('sendBundle', error);
          countSubmission('sendBundle', 'refused');
          return { status: ERROR_CATALOGUE.FORBIDDEN.http, body: errorResponse(id, error) };
        }
        const limited =
          key.tps === null && key.bundlesPerSecond === null ? ADMITTED : await limits.submission(key, transactionsIn(params[0]), true);
        const txs = limited.ok ? await parseSendBundleParams(params, validator) : limited;
        if (!txs.ok) countSubmission('sendBundle', 'refused');
        const sent = txs.ok ? await pipeline.sendBundle(txs.value, submission) : txs;
        if (!sent.ok) {
          refused('sendBundle', sent.error);
          if (Array.isArray(params[0]))
            for (const encoded of params[0].slice(0, 5)) refusals.record(encoded, context.key.id, sent.error.message);
          return errorReply(id, sent.error);
        }
        logSubmission({
          ...outcome,
          operation: 'sendBundle',
          outcome: 'accepted',
          bundleId: sent.value.bundleId,
          signatures: sent.value.signatures,
        });
        return { status: 200, body: resultResponse(id, bundleResult === 'id' ? sent.value.bundleId : sent.value.signatures) };
      }
      default: {
        if (!context.reads.ok) return errorReply(id, context.reads.error);
        if (STATUS_METHODS.has(method)) {
          const answer =
            method === 'getSubmissionStatuses' || method === 'getSubmission' || method === 'getInflightBundleStatuses'
              ? await statusView[method](params, context.key.id)
              : await statusView[method as 'getSignatureStatuses' | 'getBundleStatuses'](params);
          return {
            status: 200,
            body:
              'invalid' in answer ? errorResponse(id, slipwayError('INVALID_PARAMS', answer.invalid)) : resultResponse(id, answer.result),
          };
        }
        if (!readAllowed(method)) {
          return errorReply(
            id,
            slipwayError(
              'READ_NOT_SERVED',
              `Method not found: ${describeMethod(method)} is not served by this gateway, which forwards the reads a client needs to build, send and confirm transactions (the readMethods setting lists them; docs/API.md)`,
            ),
          );
        }
        let answer: Awaited<ReturnType<typeof router.call>>;
        try {
          answer = await router.call(method, params);
        } catch (error) {
          if (error instanceof AnswerTooLargeError) return errorReply(id, slipwayError('ANSWER_TOO_LARGE', error.message));
          // Every node failed (the reason names each): the client is told, as for a send.
          return errorReply(
            id,
            slipwayError(
              'UPSTREAM_UNAVAILABLE',
              `${describeMethod(method)} could not be answered: ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
        }
        if (answer === undefined) {
          return { status: 200, body: errorResponse(id, slipwayError('METHOD_NOT_FOUND', `Method not found: ${describeMethod(method)}`)) };
        }
        return { status: 200, body: 'result' in answer ? resultResponse(id, answer.result) : { jsonrpc: '2.0', error: answer.error, id } };
      }
    }
  }

  const endpoint = createJsonRpcEndpoint(dispatch, logError);
  return async (body: unknown, context: RpcCallContext) => {
    const { key } = context;
    const reads = key.readsPerSecond === null ? ADMITTED : await limits.reads(key, readsIn(body));
    return endpoint(body, { ...context, reads });
  };
}

/** The entries of a JSON-RPC body that count as reads: every one naming a method other than a submission. */
function readsIn(body: unknown): number {
  const isRead = (entry: unknown) => {
    const method = entry !== null && typeof entry === 'object' ? (entry as { method?: unknown }).method : undefined;
    return typeof method === 'string' && !SUBMISSION_METHODS.has(method);
  };
  return Array.isArray(body) ? body.filter(isRead).length : isRead(body) ? 1 : 0;
}
