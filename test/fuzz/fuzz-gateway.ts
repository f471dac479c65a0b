/**
 * Sends generated hostile requests to a running gateway and checks every answer: a
 * well-formed JSON body with a 2xx or 4xx status (or JSON-RPC error), never a 5xx, never a
 * dropped connection. Returns what it saw; a failure names the seed and the request's
 * index, so `fuzz --seed S` replays it.
 */
import fc from 'fast-check';
import { hostileRequests, type HostileRequest } from './hostile-requests';

export interface FuzzReport {
  readonly seed: number;
  readonly sent: number;
  /** Answers by status and error code (`400 -32602`, `200 ok`, …). */
  readonly classes: Map<string, number>;
  readonly failures: { index: number; kind: string; path: string; problem: string }[];
  /** The gateway's resident memory before and after (when `rss` was given). */
  readonly rssBeforeMiB: number | null;
  readonly rssAfterMiB: number | null;
}

export interface FuzzOptions {
  readonly url: string;
  readonly key: string;
  readonly seed: number;
  readonly count: number;
  readonly concurrency?: number;
  /** Real signed transactions (Base64) to damage. */
  readonly validTransactions: readonly string[];
  readonly onProgress?: (sent: number) => void;
  /** The gateway's resident memory in bytes (a process of its own: /proc/PID/status). */
  readonly rss?: () => number;
}

/** Requests are generated a chunk at a time (the seed of chunk c is seed + c), so that a long run holds only one chunk. */
const CHUNK = 1_000;

function classify(status: number, body: unknown): string {
  if (Array.isArray(body)) return `${status} batch of ${body.length}`;
  if (body !== null && typeof body === 'object') {
    const b = body as { error?: { code?: unknown }; code?: unknown; result?: unknown };
    if (b.error !== undefined) return `${status} ${String(b.error.code)}`;
    if (typeof b.code === 'number') return `${status} code ${b.code}`;
    return `${status} ok`;
  }
  return `${status} ${typeof body}`;
}

/** What a V8 stack frame or a path into the code looks like inside an answer. */
const STACK_TRACE = /\bat [\w.<>]+ \(|node:internal|node_modules|\/(dist|src)\/[\w/-]+\.[jt]s/;

async function sendOne(url: string, key: string, request: HostileRequest): Promise<{ status: number; body: unknown } | { problem: string }> {
  let response: Response;
  try {
    response = await fetch(`${url}${request.path}`, { method: 'POST', headers: { ...request.headers, 'x-api-key': key }, body: request.body, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    return { problem: `no answer: ${error instanceof Error ? `${error.message} ${(error.cause as Error | undefined)?.message ?? ''}` : String(error)}` };
  }
  const text = await response.text();
  if (response.status === 204 && text === '') return { status: 204, body: undefined };
  // A stack trace tells an attacker the code's layout: no answer may carry one.
  if (STACK_TRACE.test(text)) return { problem: `HTTP ${response.status} with a stack trace: ${text.slice(0, 200)}` };
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { problem: `HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 120)}` };
  }
}

export async function fuzzGateway(options: FuzzOptions): Promise<FuzzReport> {
  const arbitrary = hostileRequests(options.validTransactions);
  const classes = new Map<string, number>();
  const failures: FuzzReport['failures'] = [];
  const rssBefore = options.rss?.() ?? null;
  let sent = 0;
  for (let chunk = 0; chunk * CHUNK < options.count; chunk++) {
    const requests = fc.sample(arbitrary, { seed: options.seed + chunk, numRuns: Math.min(CHUNK, options.count - chunk * CHUNK) });
    let next = 0;
    await Promise.all(
      Array.from({ length: options.concurrency ?? 8 }, async () => {
        for (;;) {
          const offset = next++;
          if (offset >= requests.length) return;
          const index = chunk * CHUNK + offset;
          const request = requests[offset]!;
          const answer = await sendOne(options.url, options.key, request);
          sent += 1;
          if (sent % 1_000 === 0) options.onProgress?.(sent);
          if ('problem' in answer) {
            failures.push({ index, kind: request.kind, path: request.path, problem: answer.problem });
            continue;
          }
          if (answer.status >= 500) failures.push({ index, kind: request.kind, path: request.path, problem: `HTTP ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}` });
          // An internal error is a crash answered politely: as much a failure as a 5xx.
          const internal = (Array.isArray(answer.body) ? answer.body : [answer.body]).some((b) => (b as { error?: { code?: number } } | undefined)?.error?.code === -32603);
          if (internal) failures.push({ index, kind: request.kind, path: request.path, problem: `internal error (-32603) for ${request.body.toString('utf8').slice(0, 300)}` });
          const name = classify(answer.status, answer.body);
          classes.set(name, (classes.get(name) ?? 0) + 1);
        }
      }),
    );
  }
  const toMiB = (bytes: number | null) => (bytes === null ? null : bytes / 2 ** 20);
  return { seed: options.seed, sent, classes, failures, rssBeforeMiB: toMiB(rssBefore), rssAfterMiB: toMiB(options.rss?.() ?? null) };
}
