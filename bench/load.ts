/**
 * A closed-loop load at full speed with autocannon (as a library): many connections, each
 * request a fresh body, every answer checked for a JSON-RPC error.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  readonly url: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly nextBody: () => string;
  readonly durationS: number;
  readonly connections: number;
}

export interface LoadResult {
  readonly rps: number;
  readonly requests: number;
  /** Answers that were not HTTP 200 with a JSON-RPC result (or `code: 1`). */
  readonly failed: number;
  readonly latencyMs: { p50: number; p99: number };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let failed = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    pipelining: 1,
    duration: options.durationS,
    requests: [
      {
        method: 'POST',
        path: options.path,
        headers: { 'content-type': 'application/json', ...options.headers },
        setupRequest: (request) => ({ ...request, body: options.nextBody() }),
        onResponse: (status, body) => {
          if (status !== 200 || body.includes('"error"')) failed++;
        },
      },
    ],
  });
  return {
    rps: result.requests.average,
    requests: result.requests.total,
    failed: failed + result.errors + result.timeouts,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
  };
}
