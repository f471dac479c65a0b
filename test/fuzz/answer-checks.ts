/**
 * What every door's answers are checked for, in one place so that the doors cannot judge
 * alike answers differently: no stack trace, no 5xx (but a shed 503 with Retry-After), no
 * internal error, and the class an answer is counted under in the report (status and
 * error code).
 *
 * An internal error is JSON-RPC -32603 (INTERNAL_ERROR, also the code of /submit-batch's
 * 500) and, on the embedded ledger, -32091: the ledger is in the process, so it is never
 * "unavailable"; -32091 there means one of its methods threw, and the client was told the
 * exception's text.
 */

/** What a V8 stack frame or a path into the code looks like inside an answer. */
export const STACK_TRACE = /\bat [\w.<>]+ \(|node:internal|node_modules|\/(dist|src)\/[\w/-]+\.[jt]s/;

/** JSON-RPC codes that are a fault of the gateway's own, not a refusal of the input. */
export const INTERNAL_CODES: ReadonlySet<number> = new Set([-32603, -32091]);

/** One door's answer that broke a rule. */
export interface Failure {
  readonly door: string;
  /** The request's index in its door (replays with the same seed and count); -1: not a request's. */
  readonly index: number;
  readonly kind: string;
  readonly problem: string;
  /** The request, cut short, to reproduce it by hand. */
  readonly sample?: string;
}

/** The error codes inside a JSON answer: a JSON-RPC error, a `{code, message}` refusal, or each entry of a batch. */
export function errorCodes(body: unknown): unknown[] {
  if (Array.isArray(body)) return body.flatMap((entry) => errorCodes(entry));
  if (body === null || typeof body !== 'object') return [];
  const b = body as { error?: { code?: unknown }; code?: unknown };
  if (b.error !== undefined && b.error !== null && typeof b.error === 'object') return [b.error.code];
  return b.code !== undefined ? [b.code] : [];
}

/** Whether a JSON answer carries an internal error anywhere. */
export const hasInternalError = (body: unknown) => errorCodes(body).some((code) => typeof code === 'number' && INTERNAL_CODES.has(code));

/** The class of a JSON answer: `200 ok`, `200 -32602` (a JSON-RPC error), `400 code -32602` (a `{code, message}` refusal), `200 batch of 3`. */
export function classifyJson(status: number, body: unknown): string {
  if (Array.isArray(body)) return `${status} batch of ${body.length}`;
  if (body !== null && typeof body === 'object') {
    const { error, code } = body as { error?: { code?: unknown }; code?: unknown };
    if (error !== null && typeof error === 'object') return `${status} ${String(error.code)}`;
    if (code !== undefined) return `${status} code ${String(code)}`;
    if ((body as { status?: unknown }).status !== undefined) return `${status} status ${String((body as { status: unknown }).status)}`;
    return `${status} ok`;
  }
  return `${status} ${typeof body}`;
}

/** A 503 that says when to come back is load shedding, and a 505 refuses an HTTP version (HTTP/2.0, HTTP/0.9): both allowed; any other 5xx is a failure. */
export const isShed = (status: number, retryAfter: string | undefined) =>
  status === 505 || (status === 503 && retryAfter !== undefined && /^\d+$/.test(retryAfter));

/** Counts one more of `name`. */
export function count(classes: Map<string, number>, name: string): void {
  classes.set(name, (classes.get(name) ?? 0) + 1);
}

/** Failures grouped by door, the first word of their kind (the HTTP method, for raw requests) and problem (but for its numbers and quoted text), each group's first with how many there were. */
export function distinctFailures(failures: readonly Failure[]): { first: Failure; count: number }[] {
  const groups = new Map<string, { first: Failure; count: number }>();
  for (const failure of failures) {
    const shape = `${failure.door}: ${failure.kind.split(' ')[0]} ${failure.problem.replace(/"[^"]*"|\d+/g, '…').slice(0, 90)}`;
    const group = groups.get(shape);
    if (group === undefined) groups.set(shape, { first: failure, count: 1 });
    else group.count += 1;
  }
  return [...groups.values()];
}
