/**
 * The doors a JSON-RPC client uses, attacked through fetch(): hostile POST bodies on every
 * submission path, read methods with hostile parameters, and JSON-RPC batches mixing all of
 * them. Every answer must be well-formed JSON with a 2xx or 4xx status (or a shed 503 with
 * Retry-After), never a stack trace or an internal error; a batch's entries are checked and
 * counted one by one.
 */
import type { HostileRequest } from './hostile-requests';
import type { ReadRequest } from './hostile-reads';
import { STACK_TRACE, classifyJson, count, hasInternalError, isShed } from './answer-checks';
import type { DoorRun } from './door-report';

type Post = HostileRequest | ReadRequest;

async function post(
  url: string,
  key: string,
  request: Post,
): Promise<{ status: number; retryAfter: string | undefined; text: string } | { problem: string }> {
  const headers = 'headers' in request ? request.headers : { 'content-type': 'application/json' };
  try {
    const response = await fetch(`${url}${request.path}`, {
      method: 'POST',
      headers: { ...headers, 'x-api-key': key },
      body: request.body,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after') ?? undefined, text: await response.text() };
  } catch (error) {
    return {
      problem: `no answer: ${error instanceof Error ? `${error.message} ${(error.cause as Error | undefined)?.message ?? ''}` : String(error)}`,
    };
  }
}

/** Sends each input of `run` as a POST and checks its answer. */
export function postAndCheck(run: DoorRun) {
  const { report, target } = run;
  return async (request: Post, index: number): Promise<void> => {
    const fail = (problem: string) =>
      report.failures.push({
        door: report.door,
        index,
        kind: request.kind,
        problem,
        sample: `POST ${request.path} ${request.body.toString('utf8').slice(0, 300)}`,
      });
    const answer = await post(target.url, target.key, request);
    if ('problem' in answer) return void fail(answer.problem);
    const { status, text } = answer;
    if (status === 204 && text === '') return count(report.classes, '204 empty');
    // A stack trace tells an attacker the code's layout: no answer may carry one.
    if (STACK_TRACE.test(text)) fail(`HTTP ${status} with a stack trace: ${text.slice(0, 200)}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return void fail(`HTTP ${status} with a body that is not JSON: ${text.slice(0, 120)}`);
    }
    if (status >= 500 && !isShed(status, answer.retryAfter)) {
      report.fiveXx += 1;
      fail(`HTTP ${status}: ${text.slice(0, 200)}`);
    }
    // An internal error is a crash answered politely: as much a failure as a 5xx.
    if (hasInternalError(body)) {
      report.internalErrors += 1;
      const culprits = Array.isArray(body) ? body.filter((entry) => hasInternalError(entry)) : [body];
      fail(`internal error: ${JSON.stringify(culprits).slice(0, 400)}`);
    }
    if (Array.isArray(body)) {
      for (const entry of body) count(report.classes, `${status} batch entry ${classifyJson(200, entry).slice(4)}`);
      count(report.classes, `${status} batch answered`);
    } else {
      count(report.classes, classifyJson(status, body));
    }
  };
}
