/**
 * A typed client for Slipway: `import { createSlipwayClient } from 'slipway/client'`.
 *
 * Sends the forms of transaction a bot or wallet has (transaction-input.ts), turns every
 * refusal into a `SlipwayClientError` with the server's code and message, and waits and
 * tries again when the server says nothing was submitted and when to come back (HTTP 429
 * over a rate limit, 503 over capacity or a store down: both with `Retry-After`).
 *
 * Every submission carries an `Idempotency-Key` (a new UUID per call, or the caller's own),
 * the same on each of its attempts: so an answer lost on the way (a time-out, a connection
 * reset) is safe to ask again, and the client does, getting the first answer and never a
 * second send (docs/API.md, Idempotency keys).
 */
import { computeBundleId } from '../core/bundle-id';
import type { LandingReport } from '../core/landing-report';
import type { LandingEstimate, LandingEstimateRequest } from '../core/landing-estimate';
import { SlipwayClientError } from './slipway-client-error';
import { firstSignature, toBase64, type TransactionInput } from './transaction-input';

export interface SlipwayClientOptions {
  /** The gateway, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly apiKey: string;
  /** Times a request refused with Retry-After is sent again (default 3; 0: never). */
  readonly maxRetries?: number;
  /** Longest wait for one retry, whatever Retry-After says (default 10 s). */
  readonly maxRetryWaitMs?: number;
  /** Per attempt (default 30 s). */
  readonly timeoutMs?: number;
  /** A fetch of your own (tests, proxies); the global one by default. */
  readonly fetch?: typeof fetch;
}

export interface SendOptions {
  readonly skipPreflight?: boolean;
  readonly preflightCommitment?: 'processed' | 'confirmed' | 'finalized';
  readonly maxRetries?: number;
  readonly minContextSlot?: number;
  /** Send through protected routes only, held until no untrusted leader is near (docs/ANTI_MEV.md). */
  readonly antiMev?: boolean;
  /** Your own Idempotency-Key (e.g. an order ID, to retry safely across restarts of your program); a new UUID per call by default. */
  readonly idempotencyKey?: string;
}

export interface SubmitOptions {
  readonly antiMev?: boolean;
  readonly idempotencyKey?: string;
}

export interface BundleResult {
  readonly bundleId: string;
  /** Each transaction's first signature, in order. */
  readonly signatures: string[];
}

/** What `getStatuses` says of one signature or bundle ID (docs/API.md, getSubmissionStatuses); null when unknown. */
export interface SubmissionStatus {
  readonly id: string;
  readonly kind: 'transaction' | 'batch member' | 'bundle' | 'refused';
  readonly bundleId: string | null;
  readonly state: 'held' | 'forwarded' | 'landed' | 'failed' | 'expired' | 'rejected';
  readonly slot: number | null;
  readonly reason: string | null;
  /** The reason as a code of docs/API.md's outcome reasons (e.g. blockhash_expired), null while none applies. */
  readonly reasonCode: string | null;
  readonly antiMev: boolean;
  readonly transactions: readonly {
    signature: string;
    state: SubmissionStatus['state'];
    slot: number | null;
    reason: string | null;
    reasonCode: string | null;
    sends: number;
  }[];
}

export interface SlipwayClient {
  sendTransaction(tx: TransactionInput, options?: SendOptions): Promise<string>;
  /** Up to 5 transactions, each on its own (non-atomic); their signatures in order. */
  submitBatch(txs: readonly TransactionInput[], options?: SubmitOptions): Promise<string[]>;
  /** Up to 5 transactions, all or none; the same result whichever shape the gateway answers. */
  sendBundle(txs: readonly TransactionInput[], options?: Pick<SubmitOptions, 'idempotencyKey'>): Promise<BundleResult>;
  /** Up to 256 signatures or bundle IDs. */
  getStatuses(ids: readonly string[]): Promise<(SubmissionStatus | null)[]>;
  /** How this key's submissions did over the last `since` (seconds, or a duration such as "24h"; 24 h by default): docs/API.md, getLandingReport. */
  getLandingReport(since?: number | string): Promise<LandingReport>;
  /** The priority fee (or a bundle's tip) for a chance of landing within k slots, with its evidence: docs/FEES.md, getLandingEstimate. */
  getLandingEstimate(request: LandingEstimateRequest): Promise<LandingEstimate>;
}

export type { LandingReport, LandingEstimate, LandingEstimateRequest };

const BATCH_PATH = '/submit-batch';

export function createSlipwayClient(options: SlipwayClientOptions): SlipwayClient {
  const base = options.url.replace(/\/$/, '');
  const doFetch = options.fetch ?? fetch;
  const maxRetries = options.maxRetries ?? 3;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  let nextId = 1;

  /**
   * One POST, sent again while the server says to come back later, and (for a submission,
   * which carries an Idempotency-Key) when its answer was lost on the way; the answer's body otherwise.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the server's JSON, read below field by field against its documented shapes
  async function post(path: string, body: unknown, idempotencyKey?: string): Promise<{ status: number; body: any; requestId?: string }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': options.apiKey };
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      let text: string;
      try {
        response = await doFetch(`${base}${path}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await response.text();
      } catch (error) {
        // No answer (time-out, reset): the submission may have gone. Asking again under its key is safe.
        if (idempotencyKey === undefined || attempt >= maxRetries) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(maxRetryWaitMs, 100 * 2 ** attempt)));
        continue;
      }
      const requestId = response.headers.get('x-request-id') ?? undefined;
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
      let parsed: any;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        throw new SlipwayClientError(
          -32700,
          `the gateway answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
          response.status,
          undefined,
          requestId,
        );
      }
      const retryAfter = response.headers.get('retry-after');
      if ((response.status === 429 || response.status === 503) && retryAfter !== null && attempt < maxRetries) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(maxRetryWaitMs, retryWaitMs(retryAfter, parsed))));
        continue;
      }
      return { status: response.status, body: parsed, requestId };
    }
  }

  /** A JSON-RPC call's result, or its error thrown. */
  async function call<T>(method: string, params: unknown[], query = '', idempotencyKey?: string): Promise<T> {
    const { status, body, requestId } = await post(`/${query}`, { jsonrpc: '2.0', id: nextId++, method, params }, idempotencyKey);
    if (body?.error !== undefined) throw new SlipwayClientError(body.error.code, body.error.message, status, body.error.data, requestId);
    if (body === undefined || !('result' in body))
      throw new SlipwayClientError(-32603, `the gateway answered HTTP ${status} without a result`, status, undefined, requestId);
    return body.result as T;
  }

  return {
    sendTransaction(tx, sendOptions = {}) {
      const { antiMev, idempotencyKey, ...config } = sendOptions;
      const query = antiMev === true ? '?anti_mev=1' : '';
      return call<string>(
        'sendTransaction',
        [toBase64(tx), { encoding: 'base64', ...config }],
        query,
        idempotencyKey ?? crypto.randomUUID(),
      );
    },

    async submitBatch(txs, batchOptions = {}) {
      const path = `${BATCH_PATH}${batchOptions.antiMev === true ? '?anti_mev=1' : ''}`;
      const { status, body, requestId } = await post(
        path,
        { jsonrpc: '2.0', id: nextId++, params: { transactions: txs.map(toBase64), options: [] } },
        batchOptions.idempotencyKey ?? crypto.randomUUID(),
      );
      if (body?.code !== 1)
        throw new SlipwayClientError(
          body?.code ?? -32603,
          body?.message ?? `the gateway answered HTTP ${status}`,
          status,
          undefined,
          requestId,
        );
      return body.signatures as string[];
    },

    async sendBundle(txs, bundleOptions = {}) {
      const encoded = txs.map(toBase64);
      const key = bundleOptions.idempotencyKey ?? crypto.randomUUID();
      const result = await call<string | string[]>('sendBundle', [encoded, { encoding: 'base64' }], '', key);
      // The gateway answers the bundle ID (its default) or the signatures (bundleResult: signatures).
      const signatures = Array.isArray(result) ? result : encoded.map(firstSignature);
      return { bundleId: typeof result === 'string' ? result : computeBundleId(signatures), signatures };
    },

    async getStatuses(ids) {
      const { value } = await call<{ value: (SubmissionStatus | null)[] }>('getSubmissionStatuses', [ids]);
      return value;
    },

    getLandingReport(since) {
      return call<LandingReport>('getLandingReport', since === undefined ? [] : [{ since }]);
    },

    getLandingEstimate(request) {
      return call<LandingEstimate>('getLandingEstimate', [request]);
    },
  };
}

/** Milliseconds to wait: `data.retryAfterMs` when the server gave it (finer), else Retry-After's seconds. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
function retryWaitMs(header: string, body: any): number {
  const precise = body?.error?.data?.retryAfterMs ?? body?.data?.retryAfterMs;
  if (typeof precise === 'number' && precise >= 0) return precise;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000;
}
