/**
 * A JSON-RPC client for a set of equivalent endpoints (RPC nodes, or block-engine regions),
 * on undici pools: bounded time per call, per-endpoint health with a circuit breaker, and
 * failover in order of health. Transport failures (refused, reset, timed out, 5xx, a body
 * that is not JSON-RPC) count against an endpoint; a JSON-RPC error is an answer, not a fault.
 */
import { Pool } from 'undici';

/** Consecutive failures that open an endpoint's circuit. */
const BREAKER_THRESHOLD = 3;
/** How long an open circuit keeps an endpoint out of rotation before one trial call. */
const DEFAULT_BREAKER_COOLDOWN_MS = 5_000;
const CONNECTIONS_PER_ENDPOINT = 32;

export type JsonRpcAnswer = { readonly result: unknown } | { readonly error: { code: number; message: string; data?: unknown } };

/** An endpoint could not be used: the reason says why, in words an operator can act on. */
export class EndpointError extends Error {
  constructor(readonly endpoint: string, reason: string) {
    super(`${endpoint}: ${reason}`);
  }
}

class Endpoint {
  private failures = 0;
  private openUntil = 0;
  readonly pool: Pool;
  readonly path: string;

  constructor(readonly url: string, private readonly cooldownMs: number) {
    const parsed = new URL(url);
    this.pool = new Pool(parsed.origin, { connections: CONNECTIONS_PER_ENDPOINT, pipelining: 1 });
    this.path = parsed.pathname + parsed.search;
  }

  get available(): boolean {
    return Date.now() >= this.openUntil;
  }

  get failureCount(): number {
    return this.failures;
  }

  succeeded(): void {
    this.failures = 0;
    this.openUntil = 0;
  }

  failed(): void {
    this.failures += 1;
    if (this.failures >= BREAKER_THRESHOLD) this.openUntil = Date.now() + this.cooldownMs;
  }
}

export interface JsonRpcClientOptions {
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  readonly breakerCooldownMs?: number;
}

export class JsonRpcClient {
  private readonly endpoints: Endpoint[];
  private nextId = 1;

  constructor(private readonly options: JsonRpcClientOptions) {
    this.endpoints = options.urls.map((url) => new Endpoint(url, options.breakerCooldownMs ?? DEFAULT_BREAKER_COOLDOWN_MS));
  }

  /** Endpoints to try, healthiest first; open circuits only when nothing else is left. */
  private ordered(): Endpoint[] {
    const available = this.endpoints.filter((e) => e.available).sort((a, b) => a.failureCount - b.failureCount);
    return available.length > 0 ? available : [...this.endpoints];
  }

  /** Calls the first endpoint that answers, failing over in order of health. */
  async call(method: string, params: readonly unknown[], path?: string): Promise<JsonRpcAnswer> {
    const reasons: string[] = [];
    for (const endpoint of this.ordered()) {
      try {
        return await this.callEndpoint(endpoint, method, params, path);
      } catch (error) {
        reasons.push(error instanceof Error ? error.message : String(error));
      }
    }
    throw new Error(`every endpoint failed: ${reasons.join('; ')}`);
  }

  /** Calls every endpoint whose circuit is closed (all, if none is), at once. */
  async callAll(method: string, params: readonly unknown[], path?: string): Promise<PromiseSettledResult<JsonRpcAnswer>[]> {
    return Promise.allSettled(this.ordered().map((endpoint) => this.callEndpoint(endpoint, method, params, path)));
  }

  async close(): Promise<void> {
    await Promise.all(this.endpoints.map((e) => e.pool.close()));
  }

  private async callEndpoint(endpoint: Endpoint, method: string, params: readonly unknown[], path?: string): Promise<JsonRpcAnswer> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
    const timeoutMs = this.options.timeoutMs;
    try {
      const response = await endpoint.pool.request({
        path: joinPath(endpoint.path, path),
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.body.text();
      if (response.statusCode >= 300) throw new EndpointError(endpoint.url, `HTTP ${response.statusCode}`);
      const answer = parseAnswer(text);
      if (answer === undefined) throw new EndpointError(endpoint.url, 'the answer is not a JSON-RPC response');
      endpoint.succeeded();
      return answer;
    } catch (error) {
      endpoint.failed();
      if (error instanceof EndpointError) throw error;
      throw new EndpointError(endpoint.url, describeTransportError(error, timeoutMs));
    }
  }
}

function joinPath(base: string, extra: string | undefined): string {
  if (extra === undefined) return base;
  return base.replace(/\/$/, '') + extra;
}

function parseAnswer(text: string): JsonRpcAnswer | undefined {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (value === null || typeof value !== 'object') return undefined;
    if ('result' in value) return { result: value.result };
    const error = value.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
    if (error && typeof error.code === 'number' && typeof error.message === 'string') {
      return { error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

function describeTransportError(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  if (e.code === 'ECONNREFUSED') return 'connection refused';
  if (e.code === 'ECONNRESET' || e.code === 'UND_ERR_SOCKET') return 'connection reset';
  return e.message ?? String(error);
}
