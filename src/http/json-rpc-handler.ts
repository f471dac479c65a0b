/**
 * The gateway's JSON-RPC methods on `/` and the Jito-style paths: submissions go to the
 * submission service (which answers, counts and logs them); statuses to the status view; the
 * reads Slipway forwards to the router.
 *
 * JSON-RPC errors travel with HTTP 200, as on a Solana node, so that standard clients
 * surface the message; the only other statuses are 401/403 for a single request.
 */
import type { PriorityFeeAdvice } from '../advice/priority-fee-estimate';
import type { LandingAdvice } from '../advice/landing-advice';
import { ok, slipwayError, type Result, type SlipwayError } from '../errors/error-catalogue';
import type { KeyLimits } from '../limits/key-limits';
import type { Router } from '../pipeline/router';
import type { StatusView } from '../pipeline/status-view';
import type { ApiKeyRecord } from '../stores/key-store';
import type { LandingReports } from '../reports/landing-reports';
import { AnswerTooLargeError } from '../upstreams/json-rpc-client';
import { createJsonRpcEndpoint, describeMethod, resultResponse, type JsonRpcId, type Reply } from '../web/json-rpc-envelope';
import { landingReportOf } from './landing-report-method';
import { countRefusal, refuseJsonRpc, countedErrorResponse } from './refusal-replies';
import { answered } from './idempotency';
import { readParamsProblem } from './read-params';
import { simulateBundle } from './simulate-bundle';
import type { SubmissionService } from './submission-service';

export interface RpcCallContext {
  readonly key: ApiKeyRecord;
  readonly antiMev: boolean;
  readonly requestId: string;
  /** Checked; applies to sendTransaction and sendBundle (reads are idempotent by nature). */
  readonly idempotencyKey?: string;
}

/** The call's context once the request's reads have been counted against the key's limit. */
interface DispatchContext extends RpcCallContext {
  readonly reads: Result<undefined>;
}

export interface JsonRpcHandlerOptions {
  /** Where submissions are answered, counted and logged. */
  readonly service: SubmissionService;
  readonly router: Router;
  readonly statusView: StatusView;
  /** `getLandingReport`'s figures, a key's own. */
  readonly landingReports: LandingReports;
  /** `getPriorityFeeEstimate`'s answers, from the recent blocks. */
  readonly feeAdvice: PriorityFeeAdvice;
  /** `getLandingEstimate`'s answers, from Slipway's own outcomes and the recent blocks. */
  readonly landingAdvice: Pick<LandingAdvice, 'estimate'>;
  /** The key's rate limits, taken before a request's transactions are parsed or verified. */
  readonly limits: KeyLimits;
  /** `sendBundle`'s result: the bundle ID (default) or the array of signatures. */
  readonly bundleResult: 'id' | 'signatures';
  /** Whether a read method is forwarded (read-methods.ts); the refusal names the setting. */
  readonly readAllowed: (method: string) => boolean;
  /** Where unexpected failures go; the client only learns that the request failed. */
  readonly logError: (error: unknown, method: string) => void;
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
  service,
  router,
  statusView,
  landingReports,
  feeAdvice,
  landingAdvice,
  limits,
  bundleResult,
  readAllowed,
  logError,
}: JsonRpcHandlerOptions) {
  async function dispatch(id: JsonRpcId, method: string, params: readonly unknown[], context: DispatchContext): Promise<Reply> {
    switch (method) {
      case 'sendTransaction': {
        const sent = await service.sendTransaction(params, context);
        if (!sent.ok) return refuseJsonRpc(id, sent.error);
        return answered(resultResponse(id, sent.value.value), sent.value);
      }
      case 'sendBundle': {
        const sent = await service.sendBundle(params, context);
        if (!sent.ok) return refuseJsonRpc(id, sent.error);
        const receipt = sent.value.value;
        return answered(resultResponse(id, bundleResult === 'id' ? receipt.bundleId : receipt.signatures), sent.value);
      }
      case 'simulateBundle': {
        if (!context.reads.ok) return refuseJsonRpc(id, context.reads.error);
        let simulated: Awaited<ReturnType<typeof simulateBundle>>;
        try {
          simulated = await simulateBundle(router, params, context.key);
        } catch (error) {
          return refuseJsonRpc(id, unreachable(method, error));
        }
        if (!simulated.ok) return refuseJsonRpc(id, simulated.error);
        const answer = simulated.value;
        return { status: 200, body: 'result' in answer ? resultResponse(id, answer.result) : { jsonrpc: '2.0', error: answer.error, id } };
      }
      default: {
        if (!context.reads.ok) return refuseJsonRpc(id, context.reads.error);
        if (method === 'getLandingReport') {
          const report = await landingReportOf(params, context.key.id, landingReports);
          return report.ok ? { status: 200, body: resultResponse(id, report.value) } : refuseJsonRpc(id, report.error);
        }
        if (method === 'getPriorityFeeEstimate' || method === 'getLandingEstimate') {
          let estimate: Result<unknown>;
          try {
            estimate = await (method === 'getPriorityFeeEstimate' ? feeAdvice : landingAdvice).estimate(params);
          } catch (error) {
            return refuseJsonRpc(id, unreachable(method, error));
          }
          return estimate.ok ? { status: 200, body: resultResponse(id, estimate.value) } : refuseJsonRpc(id, estimate.error);
        }
        if (STATUS_METHODS.has(method)) {
          const answer =
            method === 'getSubmissionStatuses' || method === 'getSubmission' || method === 'getInflightBundleStatuses'
              ? await statusView[method](params, context.key.id)
              : await statusView[method as 'getSignatureStatuses' | 'getBundleStatuses'](params);
          return {
            status: 200,
            body:
              'invalid' in answer
                ? countedErrorResponse(id, slipwayError('INVALID_PARAMS', answer.invalid))
                : resultResponse(id, answer.result),
          };
        }
        if (!readAllowed(method)) {
          return refuseJsonRpc(
            id,
            slipwayError(
              'READ_NOT_SERVED',
              `Method not found: ${describeMethod(method)} is not served by this gateway, which forwards the reads a client needs to build, send and confirm transactions (the readMethods setting lists them; docs/API.md)`,
            ),
          );
        }
        const misfit = readParamsProblem(method, params);
        if (misfit !== null) return refuseJsonRpc(id, slipwayError('INVALID_PARAMS', misfit));
        let answer: Awaited<ReturnType<typeof router.call>>;
        try {
          answer = await router.call(method, params);
        } catch (error) {
          return refuseJsonRpc(id, unreachable(method, error));
        }
        if (answer === undefined) {
          return {
            status: 200,
            body: countedErrorResponse(id, slipwayError('METHOD_NOT_FOUND', `Method not found: ${describeMethod(method)}`)),
          };
        }
        return { status: 200, body: 'result' in answer ? resultResponse(id, answer.result) : { jsonrpc: '2.0', error: answer.error, id } };
      }
    }
  }

  const endpoint = createJsonRpcEndpoint(dispatch, logError, countRefusal);
  // Not async where the key has no read limit (the usual case): an async function returning
  // the endpoint's promise would settle its own through two more turns of the microtask queue.
  return (body: unknown, context: RpcCallContext): Promise<Reply> => {
    const { key } = context;
    if (key.readsPerSecond === null) return endpoint(body, { ...context, reads: ADMITTED });
    return limits.reads(key, readsIn(body)).then((reads) => endpoint(body, { ...context, reads }));
  };
}

/** Why a forwarded call got no answer: too large, or every node failed (the reason names each), as for a send. */
function unreachable(method: string, error: unknown): SlipwayError {
  if (error instanceof AnswerTooLargeError) return slipwayError('ANSWER_TOO_LARGE', error.message);
  return slipwayError(
    'UPSTREAM_UNAVAILABLE',
    `${describeMethod(method)} could not be answered: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** The entries of a JSON-RPC body that count as reads: every one naming a method other than a submission. */
function readsIn(body: unknown): number {
  const isRead = (entry: unknown) => {
    const method = entry !== null && typeof entry === 'object' ? (entry as { method?: unknown }).method : undefined;
    return typeof method === 'string' && !SUBMISSION_METHODS.has(method);
  };
  return Array.isArray(body) ? body.filter(isRead).length : isRead(body) ? 1 : 0;
}
