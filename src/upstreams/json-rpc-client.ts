/**
 * A JSON-RPC client for a set of equivalent endpoints (RPC nodes, or block-engine regions),
 * on undici pools: bounded time per call, per-endpoint health with a circuit breaker, and
 * failover in order of health. Transport failures (refused, reset, timed out, a non-2xx
 * status, a body that is not JSON-RPC or is cut off) count against an endpoint, and so do the
 * JSON-RPC errors by which a node says it cannot serve now (NODE_FAULT_CODES); any other
 * JSON-RPC error is an answer, not a fault.
 */
import { Pool } from 'undici';
import { upstreamCircuitOpen } from '../metrics/metrics';
import { urlLabel } from '../runtime/url-label';

/** Consecutive failures that open an endpoint's circuit. */
const BREAKER_THRESHOLD = 3;
/** How long an open circuit keeps an endpoint out of rotation before one trial call. */
const DEFAULT_BREAKER_COOLDOWN_MS = 5_000;
const CONNECTIONS_PER_ENDPOINT = 32;
/**
 * JSON-RPC errors that are about the node, not the request: another node may well answer.
 * -32005 Agave's NodeUnhealthy (behind the cluster), -32603 internal error, -32097 a block
 * engine's rate limit (another region may take it).
 */
const NODE_FAULT_CODES = new Set([-32005, -32603, -32097]);

export type JsonRpcAnswer = { readonly result: unknown } | { readonly error: { code: number; message: string; data?: unknown } };

/**
 * Whether a node or engine refused a send because it has processed the transaction already
 * (its preflight's `AlreadyProcessed`): the network has it, which is what the send was for.
 */
export function alreadyProcessed(answer: JsonRpcAnswer): boolean {
  if (!('error' in answer) || answer.error.code !== -32002) return false;
  const data = answer.error.data as { err?: unknown } | undefined;
  return data?.err === 'AlreadyProcessed';
}

/**
 * An answer larger than the client's limit: the request asked for too much (a node that
 * answers it is healthy), so it is neither failed over nor counted against the endpoint.
 */
export class AnswerTooLargeError extends Error {
  constructor(
    readonly method: string,
    readonly limitBytes: number,
  ) {
    super(
      `the answer to ${method} is larger than ${limitBytes} bytes (maxUpstreamAnswerBytes): ask for less (fewer accounts, a dataSlice, a narrower filter)`,
    );
  }
}

/** An endpoint could not be used: the reason says why, in words an operator can act on. */
export class EndpointError extends Error {
  constructor(
    readonly endpoint: string,
    reason: string,
  ) {
    super(`${endpoint}: ${reason}`);
  }
}

class Endpoint {
  private failures = 0;
  private openUntil = 0;
  readonly pool: Pool;
  readonly path: string;
  /** The URL as messages name it: no path or query, where providers put credentials. */
  readonly label: string;

  /** Whether its circuit is open, as the metric shows it. */
  private readonly circuit: { set(value: number): void };

  constructor(
    url: string,
    private readonly cooldownMs: number,
    upstream: string,
  ) {
    const parsed = new URL(url);
    this.label = urlLabel(url);
    this.circuit = upstreamCircuitOpen.labels({ upstream, endpoint: this.label });
    this.circuit.set(0);
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
    if (this.failures >= BREAKER_THRESHOLD) this.circuit.set(0);
    this.failures = 0;
    this.openUntil = 0;
  }

  failed(): void {
    this.failures += 1;
    if (this.failures >= BREAKER_THRESHOLD) {
      this.openUntil = Date.now() + this.cooldownMs;
      this.circuit.set(1);
    }
  }
}

export interface JsonRpcClientOptions {
  /** The configured upstream's name, for the metrics. */
  readonly name: string;
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  /** Answers larger than this are refused unread (AnswerTooLargeError). */
  readonly maxAnswerBytes: number;
  readonly breakerCooldownMs?: number;
}

export class JsonRpcClient {
  private readonly endpoints: Endpoint[];
  private nextId = 1;

  constructor(private readonly options: JsonRpcClientOptions) {
    this.endpoints = options.urls.map((url) => new Endpoint(url, options.breakerCooldownMs ?? DEFAULT_BREAKER_COOLDOWN_MS, options.name));
  }

  /** Endpoints whose circuit is closed, healthiest first, and those whose circuit is open (the last resort). */
  private ordered(): { available: Endpoint[]; open: Endpoint[] } {
    const available = this.endpoints.filter((e) => e.available).sort((a, b) => a.failureCount - b.failureCount);
    return { available, open: this.endpoints.filter((e) => !e.available) };
  }

  /** Calls the first endpoint that answers, failing over in order of health, open circuits last. */
  async call(method: string, params: readonly unknown[], path?: string): Promise<JsonRpcAnswer> {
    const reasons: string[] = [];
    const { available, open } = this.ordered();
    for (const endpoint of [...available, ...open]) {
      try {
        return await this.callEndpoint(endpoint, method, params, path);
      } catch (error) {
        if (error instanceof AnswerTooLargeError) throw error; // every node would answer the same
        reasons.push(error instanceof Error ? error.message : String(error));
      }
    }
    throw new Error(`every endpoint failed: ${reasons.join('; ')}`);
  }

  /**
   * Calls every endpoint whose circuit is closed, at once; if none of them answers, those
   * whose circuit is open too (a node that failed a moment ago may be back, and there is
   * nothing to lose).
   */
  async callAll(method: string, params: readonly unknown[], path?: string): Promise<PromiseSettledResult<JsonRpcAnswer>[]> {
    const { available, open } = this.ordered();
    const settle = (endpoints: Endpoint[]) =>
      Promise.allSettled(endpoints.map((endpoint) => this.callEndpoint(endpoint, method, params, path)));
    const first = await settle(available);
    if (open.length === 0 || first.some((r) => r.status === 'fulfilled')) return first;
    return [...first, ...(await settle(open))];
  }

  async close(): Promise<void> {
    await Promise.all(this.endpoints.map((e) => e.pool.close()));
  }

  private async callEndpoint(endpoint: Endpoint, method: string, params: readonly unknown[], path?: string): Promise<JsonRpcAnswer> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
    const timeoutMs = this.options.timeoutMs;
    let status: number | undefined;
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
      status = response.statusCode;
      const text = await readCapped(response.body, this.options.maxAnswerBytes, method);
      if (response.statusCode >= 300) throw new EndpointError(endpoint.label, `HTTP ${response.statusCode}`);
      const answer = parseAnswer(text);
      if (answer === undefined)
        throw new EndpointError(
          endpoint.label,
          `the answer is not a JSON-RPC response (HTTP ${response.statusCode}, ${describeBody(text)})`,
        );
      if ('error' in answer && NODE_FAULT_CODES.has(answer.error.code)) {
        throw new EndpointError(endpoint.label, `the node cannot serve now: ${answer.error.message} (${answer.error.code})`);
      }
      endpoint.succeeded();
      return answer;
    } catch (error) {
      if (error instanceof AnswerTooLargeError) {
        endpoint.succeeded();
        throw error;
      }
      endpoint.failed();
      if (error instanceof EndpointError) throw error;
      const reason = describeTransportError(error, timeoutMs);
      throw new EndpointError(
        endpoint.label,
        status === undefined ? reason : `the answer was cut off after its headers (HTTP ${status}): ${reason}`,
      );
    }
  }
}

/** The body as text, or AnswerTooLargeError as soon as it passes `limit` bytes (the rest is not read). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number, method: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new AnswerTooLargeError(method, limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
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

/** What a body that is not JSON-RPC looks like, for the operator: its size and a printable start. */
function describeBody(text: string): string {
  if (text === '') return 'empty';
  const start = text.slice(0, 40).replace(/[^\x20-\x7e]/g, '?');
  return `${text.length} bytes: ${JSON.stringify(start)}${text.length > 40 ? '…' : ''}`;
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
