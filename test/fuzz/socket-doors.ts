/**
 * The doors below HTTP clients, attacked over raw TCP: hostile request lines and headers,
 * every method on every path, and WebSocket upgrades, on the main port and on port + 1.
 *
 * An answer may be any 1xx–4xx (101 only for an upgrade that deserved it, with the right
 * Sec-WebSocket-Accept), or a 503 shed with Retry-After; never another 5xx, a stack trace,
 * JSON that does not parse, or an internal error. A POST to a path that needs a key must not
 * get a 2xx without one. The server may close without answering only a request that is not
 * HTTP every parser takes: a request built of well-formed parts must be answered.
 */
import { STACK_TRACE, classifyJson, count, hasInternalError, isShed } from './answer-checks';
import type { DoorRun } from './door-report';
import type { RawRequest } from './hostile-raw-requests';
import { acceptFor, type UpgradeRequest } from './hostile-upgrades';
import { exchange, type RawAnswer } from './raw-http';

const TIMEOUT_MS = 10_000;

/** A socket door's port for input `index`: `every` says how often it is port + 1 instead (1: always; 0: never). */
export const portFor = (run: DoorRun, index: number, every: number) =>
  every > 0 && index % every === every - 1 ? run.target.wsPort : run.target.port;

/** The class of an answer whose body is not JSON: its media type in a word. */
function mediaOf(answer: RawAnswer): string {
  const type = answer.headers['content-type'] ?? '';
  if (answer.body.length === 0) return 'empty';
  if (type.includes('event-stream')) return 'event stream';
  if (type.includes('html')) return 'html';
  if (type.includes('version=0.0.4') || type.includes('openmetrics')) return 'metrics text';
  return type.split(';')[0] || 'no type';
}

/** Checks one answer to a `method` request; `keyedWithoutKey`: a request to a keyed door (a POST to a keyed path, a read of the tip floor) that carried no key. Returns its class. */
function checkAnswer(run: DoorRun, answer: RawAnswer, method: string, keyedWithoutKey: boolean, fail: (problem: string) => void): string {
  const { report } = run;
  const text = answer.body.toString('latin1');
  if (answer.status < 100) {
    fail(`an answer that is not HTTP: ${answer.headers.line ?? ''}`);
    return 'not HTTP';
  }
  if (answer.status >= 500 && !isShed(answer.status, answer.headers['retry-after'])) {
    report.fiveXx += 1;
    fail(`HTTP ${answer.status}: ${text.slice(0, 200)}`);
  }
  if (STACK_TRACE.test(text)) fail(`HTTP ${answer.status} with a stack trace: ${text.slice(0, 200)}`);
  if (keyedWithoutKey && answer.status >= 200 && answer.status < 300)
    fail(`HTTP ${answer.status} to ${method} on a keyed path that carried no valid key: ${text.slice(0, 200)}`);
  // A HEAD's answer has headers only (the refusals of requests that did not parse are written whole, and have a body).
  if (method === 'HEAD' && answer.body.length === 0) return `${answer.status} to HEAD`;
  if (!(answer.headers['content-type'] ?? '').includes('json')) return `${answer.status} ${mediaOf(answer)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    fail(`HTTP ${answer.status} says JSON but its body is not: ${text.slice(0, 120)}`);
    return `${answer.status} broken json`;
  }
  if (hasInternalError(body)) {
    report.internalErrors += 1;
    fail(`internal error: ${text.slice(0, 300)}`);
  }
  return classifyJson(answer.status, body);
}

const sampleOf = (bytes: Buffer) => JSON.stringify(bytes.subarray(0, 400).toString('latin1'));

/** Sends each raw request to its port (port + 1 every `wsEvery`) and checks every answer. */
export function sendRawRequests(run: DoorRun, wsEvery: number) {
  const { report } = run;
  return async (request: RawRequest, index: number): Promise<void> => {
    const port = portFor(run, index, wsEvery);
    const fail = (problem: string) =>
      report.failures.push({
        door: report.door,
        index,
        kind: request.kind,
        problem: `${port === run.target.wsPort ? 'port + 1' : 'main port'}: ${problem}`,
        sample: sampleOf(request.bytes),
      });
    // A well-formed request is read like any client's, until its answers come (a half-close would make Node drop
    // answers not yet written); one that is not is half-closed, so that the server sees where it ends.
    const result = await exchange({
      port,
      bytes: request.bytes,
      methods: request.requests.map((r) => r.method),
      halfClose: !request.wellFormed,
      stopAfter: request.requests.length,
      timeoutMs: TIMEOUT_MS,
    });
    if (result.ending === 'refused') return void fail('connection refused');
    if (result.answers.length === 0) {
      if (result.ending === 'timeout') return void fail(`neither answered nor closed within ${TIMEOUT_MS / 1000} s`);
      if (request.wellFormed) fail('closed without an answer, though the request is well-formed HTTP/1.1');
      return count(report.classes, request.wellFormed ? 'closed without an answer (well-formed)' : 'closed without an answer (not HTTP)');
    }
    result.answers.forEach((answer, i) => {
      const sent = request.requests[Math.min(i, request.requests.length - 1)]!;
      count(report.classes, checkAnswer(run, answer, sent.method, sent.keyed && !sent.credential, fail));
    });
  };
}

/** Sends each upgrade request (alternating ports) and checks the answer: 101 only when deserved, and with the right accept value. */
export function sendUpgrades(run: DoorRun) {
  const { report } = run;
  return async (request: UpgradeRequest, index: number): Promise<void> => {
    const port = portFor(run, index, 2);
    const fail = (problem: string) =>
      report.failures.push({
        door: report.door,
        index,
        kind: request.kind,
        problem: `${port === run.target.wsPort ? 'port + 1' : 'main port'}: ${problem}`,
        sample: sampleOf(request.bytes),
      });
    const result = await exchange({
      port,
      bytes: request.bytes,
      methods: [request.method],
      halfClose: false,
      stopAfter: 1,
      timeoutMs: TIMEOUT_MS,
    });
    if (result.ending === 'refused') return void fail('connection refused');
    const answer = result.answers[0];
    if (answer === undefined) {
      if (result.ending === 'timeout') return void fail(`neither answered nor closed within ${TIMEOUT_MS / 1000} s`);
      if (request.wellFormed) fail('closed without an answer, though the request is well-formed HTTP/1.1');
      return count(report.classes, request.wellFormed ? 'closed without an answer (well-formed)' : 'closed without an answer (not HTTP)');
    }
    if (answer.status === 101) {
      if (!request.mayOpen) fail('101: opened a WebSocket for a request that should have been refused');
      if (request.wsKey === undefined || answer.headers['sec-websocket-accept'] !== acceptFor(request.wsKey))
        fail(`101 with Sec-WebSocket-Accept ${answer.headers['sec-websocket-accept']}, not the one for the key sent`);
      return count(report.classes, `101 ${port === run.target.wsPort ? 'port + 1' : 'main port'}`);
    }
    count(report.classes, checkAnswer(run, answer, request.method, false, fail));
  };
}
