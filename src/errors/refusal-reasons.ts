/**
 * Which outcome reason (core/outcome-reasons.ts) each refusal of the error catalogue is, so
 * that a submission refused before it was journaled ends with a code too.
 */
import type { OutcomeReason } from '../core/outcome-reasons';
import type { ErrorKind, SlipwayError } from './error-catalogue';

const BY_KIND: Record<ErrorKind, OutcomeReason> = {
  PARSE_ERROR: 'invalid_request',
  INVALID_REQUEST: 'invalid_request',
  BODY_TOO_LARGE: 'invalid_request',
  UNSUPPORTED_ENCODING: 'invalid_request',
  METHOD_NOT_FOUND: 'invalid_request',
  INVALID_PARAMS: 'invalid_request',
  INTERNAL_ERROR: 'unavailable',
  PREFLIGHT_FAILURE: 'simulation_failed',
  SIGNATURE_VERIFICATION_FAILURE: 'invalid_request',
  MIN_CONTEXT_SLOT_NOT_REACHED: 'unavailable',
  BUNDLE_REJECTED: 'engine_rejected',
  UPSTREAM_UNAVAILABLE: 'upstream_unreachable',
  ROUTE_NOT_CONFIGURED: 'unavailable',
  BUNDLE_NOT_ADMITTED: 'tip_below_minimum',
  STORE_UNAVAILABLE: 'unavailable',
  SERVICE_UNAVAILABLE: 'unavailable',
  TOO_MANY_CONNECTIONS: 'unavailable',
  RATE_LIMITED: 'rate_limited',
  ANSWER_TOO_LARGE: 'invalid_request',
  IDEMPOTENCY_KEY_REUSED: 'duplicate',
  READ_NOT_SERVED: 'invalid_request',
  UNAUTHORIZED: 'not_permitted',
  FORBIDDEN: 'not_permitted',
};

export function refusalReason(error: SlipwayError): OutcomeReason {
  const data = error.data as { simulated?: unknown; err?: unknown } | undefined;
  // A bundle refused on its simulation was never sent; a preflight saying it already landed is a resubmission.
  if (error.kind === 'BUNDLE_REJECTED' && data?.simulated === true) return 'simulation_failed';
  if (error.kind === 'PREFLIGHT_FAILURE' && data?.err === 'AlreadyProcessed') return 'duplicate';
  return BY_KIND[error.kind];
}
