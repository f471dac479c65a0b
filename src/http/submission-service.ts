/**
 * The one owner of every submission's outcome: `sendTransaction` and `sendBundle` on the
 * JSON-RPC paths and `POST /submit-batch`, from the fast path and the Fastify routes alike,
 * come here. Each is checked in the same order (permission, the key's rate, the parameters,
 * then the pipeline), and whatever it comes to is counted (`slipway_submissions_total`),
 * logged (one info line, with the request id) and, when refused, remembered for
 * `getSubmissionStatuses`, here and nowhere else.
 */
import type { OutcomeReason } from '../core/outcome-reasons';
import { refusalReason } from '../errors/refusal-reasons';
import { ERROR_CATALOGUE, fail, ok, slipwayError, type Result, type SlipwayError } from '../errors/error-catalogue';
import { transactionsIn, type KeyLimits } from '../limits/key-limits';
import { computeBundleId } from '../core/bundle-id';
import { countOutcomeReason, countSubmission } from '../metrics/metrics';
import type { RecentRefusals } from '../pipeline/recent-refusals';
import type { BundleReceipt, Submitted, SubmissionPipeline } from '../pipeline/submission-shapes';
import type { ApiKeyRecord } from '../stores/key-store';
import type { TransactionValidator } from '../validation/transaction-validator';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { whyIdCannotReturn } from '../web/json-rpc-envelope';
import type { Idempotency } from './idempotency';
import { parseSendBundleParams, parseSendTransactionParams, parseSubmitBatchParams } from './parse-params';

export type Operation = 'sendTransaction' | 'submitBatch' | 'sendBundle';

/** One log line per submission outcome: public identifiers and the refusal, never the transaction or the key. */
export interface SubmissionOutcome {
  readonly requestId: string;
  readonly operation: Operation;
  readonly keyId: string;
  readonly antiMev: boolean;
  /** As `slipway_submissions_total` counts it; `replayed`: the first answer to its Idempotency-Key, again. */
  readonly outcome: 'accepted' | 'duplicate' | 'replayed' | 'refused' | 'rejected';
  readonly idempotencyKey?: string;
  /** Accepted: the signatures, or the bundle ID. */
  readonly signatures?: readonly string[];
  readonly bundleId?: string;
  /** Refused: the code and message the client got, and the outcome reason (core/outcome-reasons.ts). */
  readonly code?: number;
  readonly reasonCode?: OutcomeReason;
  readonly error?: string;
}

export interface SubmissionRequest {
  readonly key: ApiKeyRecord;
  readonly antiMev: boolean;
  readonly requestId: string;
  /** The request's Idempotency-Key header, checked (idempotency.ts). */
  readonly idempotencyKey?: string;
}

export interface SubmissionServiceOptions {
  readonly pipeline: SubmissionPipeline;
  readonly validator: TransactionValidator;
  /** The key's rate limits, taken before a request's transactions are parsed or verified. */
  readonly limits: KeyLimits;
  readonly refusals: RecentRefusals;
  /** Told of every refusal, for the landing report's refusal counts (reports/refusal-count-buffer.ts). */
  readonly recordRefusal?: (keyId: string, operation: Operation, error: SlipwayError, encoded: unknown) => void;
  /**
   * Where the line goes; null when the log level leaves it out (warn and above). The line is
   * not even made then: its objects, built on every submission, were most of what the young
   * generation promoted at full load (measured with --trace-gc-nvp, 4 connections: 562 → 249 bytes a
   * request for the line alone).
   */
  readonly logSubmission: ((outcome: SubmissionOutcome) => void) | null;
  /** Where Idempotency-Keys are claimed and answered. */
  readonly idempotency: Idempotency;
}

export interface SubmissionService {
  /** `params` as JSON-RPC's `sendTransaction` takes them. */
  sendTransaction(params: readonly unknown[], request: SubmissionRequest): Promise<Result<Submitted<string>>>;
  /** `params` as Jito's `sendBundle` takes them. */
  sendBundle(params: readonly unknown[], request: SubmissionRequest): Promise<Result<Submitted<BundleReceipt>>>;
  /** The whole `/submit-batch` body: `{jsonrpc?, id?, params: {transactions, options}}`. */
  submitBatch(body: unknown, request: SubmissionRequest): Promise<Result<Submitted<string[]>>>;
  /** A submission refused before it could be read (a body that is not JSON, a bad `anti_mev`): counted and logged like the others. */
  refuse(operation: Operation, request: SubmissionRequest, error: SlipwayError): Result<never>;
}

const ADMITTED = ok(undefined);

/** What every submission's log line starts with. */
const lineOf = (request: SubmissionRequest, operation: Operation) => ({
  requestId: request.requestId,
  operation,
  keyId: request.key.id,
  antiMev: request.antiMev,
  ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }),
});

export function createSubmissionService({
  pipeline,
  validator,
  limits,
  refusals,
  recordRefusal,
  logSubmission,
  idempotency,
}: SubmissionServiceOptions): SubmissionService {
  /** The pipeline's answer, or with an Idempotency-Key, the first answer to it (idempotency.ts). */
  function submitOnce<T>(
    operation: Operation,
    request: SubmissionRequest,
    transactions: readonly ValidatedTransaction[],
    submit: () => Promise<Result<Submitted<T>>>,
  ): Promise<Result<Submitted<T>>> {
    const { idempotencyKey } = request;
    if (idempotencyKey === undefined) return submit();
    const bundleId = operation === 'sendBundle' ? computeBundleId(transactions.map((tx) => tx.signature)) : null;
    const submission = { keyId: request.key.id, idempotencyKey, operation, antiMev: request.antiMev, transactions, bundleId };
    return idempotency.run(submission, submit);
  }

  /** Counts, logs and (when refused) remembers what the submission came to, and answers its value. */
  function settle<T>(
    operation: Operation,
    request: SubmissionRequest,
    encoded: unknown,
    result: Result<Submitted<T>>,
    shown: (value: T) => Pick<SubmissionOutcome, 'signatures' | 'bundleId'>,
  ): Result<Submitted<T>> {
    if (result.ok) {
      const { outcome, value } = result.value;
      countSubmission(operation, outcome);
      logSubmission?.({ ...lineOf(request, operation), outcome, ...shown(value) });
      return result;
    }
    const { error } = result;
    const reasonCode = refusalReason(error);
    // Rejected: sent and refused by its route; a bundle refused on its simulation was never sent.
    const outcome = reasonCode === 'engine_rejected' ? 'rejected' : 'refused';
    countSubmission(operation, outcome);
    countOutcomeReason(reasonCode);
    logSubmission?.({ ...lineOf(request, operation), outcome, code: ERROR_CATALOGUE[error.kind].code, reasonCode, error: error.message });
    recordRefusal?.(request.key.id, operation, error, encoded);
    for (const transaction of Array.isArray(encoded) ? encoded.slice(0, 5) : [encoded])
      refusals.record(transaction, request.key.id, error.message, reasonCode);
    return result;
  }

  const refused = (error: SlipwayError): Result<never> => fail(error);

  return {
    async sendTransaction(params, request) {
      const { key } = request;
      const limited = key.tps === null ? ADMITTED : await limits.submission(key, 1, false);
      const input = limited.ok ? await parseSendTransactionParams(params, validator) : limited;
      const sent = input.ok
        ? await submitOnce('sendTransaction', request, [input.value.transaction], () =>
            pipeline.sendTransaction(input.value.transaction, input.value.options, { keyId: key.id, antiMev: request.antiMev }),
          )
        : input;
      return settle('sendTransaction', request, params[0], sent, (signature) => ({ signatures: [signature] }));
    },

    async sendBundle(params, request) {
      const { key } = request;
      const sent = await (async (): Promise<Result<Submitted<BundleReceipt>>> => {
        if (!key.bundle) {
          return refused(
            slipwayError(
              'FORBIDDEN',
              `API key ${key.id} may not call sendBundle: bundles are enabled per key (bin/slipway keys set ${key.id} --bundle on)`,
            ),
          );
        }
        const limited =
          key.tps === null && key.bundlesPerSecond === null ? ADMITTED : await limits.submission(key, transactionsIn(params[0]), true);
        const txs = limited.ok ? await parseSendBundleParams(params, validator) : limited;
        if (!txs.ok) return txs;
        return submitOnce('sendBundle', request, txs.value, () =>
          pipeline.sendBundle(txs.value, { keyId: key.id, antiMev: request.antiMev }),
        );
      })();
      return settle('sendBundle', request, params[0], sent, (receipt) => ({ bundleId: receipt.bundleId, signatures: receipt.signatures }));
    },

    async submitBatch(body, request) {
      const { key } = request;
      const members = (body as { params?: { transactions?: unknown } } | null)?.params?.transactions;
      const sent = await (async (): Promise<Result<Submitted<string[]>>> => {
        const envelope = checkBatchEnvelope(body);
        if (envelope !== null) return refused(envelope);
        // The key's limit is taken before the transactions are parsed and their signatures verified.
        const limited = key.tps === null ? undefined : await limits.submission(key, transactionsIn(members), false);
        const txs =
          limited === undefined || limited.ok ? await parseSubmitBatchParams((body as { params?: unknown }).params, validator) : limited;
        if (!txs.ok) return txs;
        return submitOnce('submitBatch', request, txs.value, () =>
          pipeline.submitBatch(txs.value, { keyId: key.id, antiMev: request.antiMev }),
        );
      })();
      return settle('submitBatch', request, Array.isArray(members) ? members : [], sent, (signatures) => ({ signatures }));
    },

    refuse: (operation, request, error) => settle(operation, request, [], fail(error), () => ({})) as Result<never>,
  };
}

/** Why a `/submit-batch` body is not one, or null. */
function checkBatchEnvelope(body: unknown): SlipwayError | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return slipwayError(
      'INVALID_REQUEST',
      'the body must be a JSON object: {"jsonrpc": "2.0", "id": 1, "params": {"transactions": […], "options": []}}',
    );
  }
  const { jsonrpc, id } = body as Record<string, unknown>;
  if (jsonrpc !== undefined && jsonrpc !== '2.0') return slipwayError('INVALID_REQUEST', 'jsonrpc must be "2.0" when present');
  if (id !== undefined && id !== null && typeof id !== 'number' && typeof id !== 'string') {
    return slipwayError('INVALID_REQUEST', 'id must be a number, a string or null when present');
  }
  const unreturnable = typeof id === 'number' ? whyIdCannotReturn(id) : null;
  return unreturnable === null ? null : slipwayError('INVALID_REQUEST', unreturnable.replace(/^Invalid Request: /, ''));
}
