/**
 * A closed-loop load at full speed with autocannon (as a library): many connections, each
 * request a fresh body, every answer checked for a JSON-RPC error. Given the server's pid,
 * also its CPU time (all threads, from /proc) per request served over the run: what a
 * request costs, which holds however fast the machine is that day (requests/s do not).
 */
import autocannon from 'autocannon';
import { cpuMicros } from './proc-cpu';

export interface LoadOptions {
  readonly url: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly nextBody: () => string;
  readonly durationS: number;
  readonly connections: number;
  /** The server's process: its CPU time is read before and after the run. */
  readonly pid?: number;
}

export interface LoadResult {
  readonly rps: number;
  readonly requests: number;
  /** Answers that were not HTTP 200 with a JSON-RPC result (or `code: 1`). */
  readonly failed: number;
  readonly latencyMs: { p50: number; p99: number };
  /** The server's CPU time (user + system, all threads) per request answered over the run, µs; when its pid was given. */
  readonly cpuUsPerRequest?: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let failed = 0;
  const cpuBefore = options.pid === undefined ? 0 : cpuMicros(options.pid);
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
  const cpu = options.pid === undefined ? undefined : (cpuMicros(options.pid) - cpuBefore) / Math.max(1, result.requests.total);
  return {
    ...(cpu === undefined ? {} : { cpuUsPerRequest: cpu }),
    rps: result.requests.average,
    requests: result.requests.total,
    failed: failed + result.errors + result.timeouts,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
  };
}
