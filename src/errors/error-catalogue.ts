/**
 * The catalogue of refusals: what a client is told when Slipway refuses a request, as a
 * JSON-RPC error code and an HTTP status. (Its companion, core/outcome-reasons.ts, is the
 * catalogue of outcome reasons: why a submission did not land, as a state's reason code; each
 * refusal is counted there too, under the reason errors/refusal-reasons.ts gives it.)
 *
 * Each entry fixes the JSON-RPC code, the HTTP status and the metric label of one kind of
 * refusal. Codes reuse Agave's JSON-RPC codes where a Solana node has the same error, so
 * Solana clients decode Slipway's errors natively; Slipway's own codes sit in -32080..-32099.
 * Codes are never renumbered: clients match on them. `/submit-batch` reports the same
 * numeric codes in its `{code, message}` body (success there is `code: 1`).
 */
import { clip } from './client-text';

export const ERROR_CATALOGUE = {
  PARSE_ERROR: { code: -32700, http: 200, batchHttp: 400 },
  INVALID_REQUEST: { code: -32600, http: 200, batchHttp: 400 },
  /** The body is larger than the limit (docs/API.md). */
  BODY_TOO_LARGE: { code: -32600, http: 200, batchHttp: 413 },
  /** A compressed body (Content-Encoding other than identity): refused, not decompressed. */
  UNSUPPORTED_ENCODING: { code: -32600, http: 200, batchHttp: 415 },
  METHOD_NOT_FOUND: { code: -32601, http: 200, batchHttp: 400 },
  INVALID_PARAMS: { code: -32602, http: 200, batchHttp: 400 },
  INTERNAL_ERROR: { code: -32603, http: 200, batchHttp: 500 },
  /** Agave: RpcCustomError::SendTransactionPreflightFailure. */
  PREFLIGHT_FAILURE: { code: -32002, http: 200, batchHttp: 400 },
  /** Agave: RpcCustomError::TransactionSignatureVerificationFailure. */
  SIGNATURE_VERIFICATION_FAILURE: { code: -32003, http: 200, batchHttp: 400 },
  /** Agave: RpcCustomError::MinContextSlotNotReached. */
  MIN_CONTEXT_SLOT_NOT_REACHED: { code: -32016, http: 200, batchHttp: 400 },
  /** A bundle that the route executed and rejected as a whole; nothing of it remains. */
  BUNDLE_REJECTED: { code: -32090, http: 200, batchHttp: 400 },
  /** The upstream could not take the submission (unreachable, refused, timed out). */
  UPSTREAM_UNAVAILABLE: { code: -32091, http: 200, batchHttp: 502 },
  /** The operation (or anti-MEV) has no route on this gateway's configuration. */
  ROUTE_NOT_CONFIGURED: { code: -32092, http: 200, batchHttp: 503 },
  /** An upstream refuses the bundle before it is sent (e.g. it pays no tip). */
  BUNDLE_NOT_ADMITTED: { code: -32093, http: 200, batchHttp: 400 },
  /** A shared store (PostgreSQL, Redis) cannot be reached: nothing was submitted; try again. */
  STORE_UNAVAILABLE: { code: -32094, http: 503, batchHttp: 503 },
  /** Over capacity (too many requests in progress, the event loop late) or shutting down: nothing was submitted; Retry-After. */
  SERVICE_UNAVAILABLE: { code: -32095, http: 503, batchHttp: 503 },
  /** The client's address has more connections open than allowed: nothing was submitted; the connection is closed. */
  TOO_MANY_CONNECTIONS: { code: -32096, http: 429, batchHttp: 429 },
  /** Over the key's rate limit (Jito's code): nothing was submitted; Retry-After says when it fits. */
  RATE_LIMITED: { code: -32097, http: 429, batchHttp: 429 },
  /** An Idempotency-Key already used, by the same API key, for a different submission: nothing was sent; `data` names that one. */
  IDEMPOTENCY_KEY_REUSED: { code: -32088, http: 200, batchHttp: 422 },
  /** An upstream's answer is larger than maxUpstreamAnswerBytes: the read asked for too much; nothing was answered. */
  ANSWER_TOO_LARGE: { code: -32089, http: 200, batchHttp: 502 },
  /** A read method this gateway does not forward (readMethods). */
  READ_NOT_SERVED: { code: -32601, http: 200, batchHttp: 400 },
  /** No, unknown or revoked API key. */
  UNAUTHORIZED: { code: -32098, http: 401, batchHttp: 401 },
  /** The key is valid but lacks the permission the operation needs. */
  FORBIDDEN: { code: -32099, http: 403, batchHttp: 403 },
} as const;

export type ErrorKind = keyof typeof ERROR_CATALOGUE;

/** An expected refusal, carried as a value through the pipeline up to the HTTP layer. */
export interface SlipwayError {
  readonly kind: ErrorKind;
  readonly message: string;
  readonly data?: unknown;
  /** The submission was journaled (as `rejected`) before it was refused: the journal counts it, not the refusal counts. Never sent to clients. */
  readonly journaled?: true;
}

/** The longest message a refusal carries (and a log line or kept refusal repeats). */
const MAX_MESSAGE_CHARS = 1_000;

/** Builds a refusal of the given kind; the message must tell the user what to change. */
export function slipwayError(kind: ErrorKind, message: string, data?: unknown): SlipwayError {
  // Messages quote clients and upstreams (client-text.ts cuts what it quotes); this bounds the rest.
  const text = clip(message, MAX_MESSAGE_CHARS);
  return data === undefined ? { kind, message: text } : { kind, message: text, data };
}

/** The JSON-RPC error object a client receives for a refusal. */
export function toJsonRpcError(error: SlipwayError): { code: number; message: string; data?: unknown } {
  const { code } = ERROR_CATALOGUE[error.kind];
  return error.data === undefined ? { code, message: error.message } : { code, message: error.message, data: error.data };
}

/** The result type of every pipeline step that can refuse. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: SlipwayError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(error: SlipwayError): Result<T> => ({ ok: false, error });
