/**
 * Requests node:http accepts, or answers itself outside Slipway's shape, that Slipway refuses
 * in its `{code, message}` shape with a status that says why (the connection then closes):
 *
 * - an HTTP version other than 1.0 and 1.1: llhttp takes `HTTP/0.9` and `HTTP/2.0` request
 *   lines as if they were HTTP/1.x; Slipway answers 505 (RFC 9110 §15.6.6). HTTP/1.0 is
 *   served: load generators and some proxies' checks still send it.
 * - an HTTP/1.1 request without Host, or with more than one (RFC 9112 §3.2 asks for a 400
 *   either way): node:http's own answer to a missing one is a bare 400 without a body, so its
 *   check is turned off (`requireHostHeader: false`) and made here; it serves a repeated one.
 *   (Versions llhttp itself refuses, such as HTTP/1.2, get the same 505: node-listener.ts.)
 * - an `Expect` other than `100-continue`: node:http's own answer is a bare 417; this one
 *   says what to send instead (RFC 9110 §10.1.1).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { quote } from '../errors/client-text';
import { ERROR_CATALOGUE } from '../errors/error-catalogue';
import { writeAnswer } from './fast-path';

/** A refusal before anything else is done with the request: its status and words. */
export interface ProtocolRefusal {
  readonly status: number;
  readonly message: string;
}

/** Why node:http's request cannot be served as HTTP/1.x, or null. */
export function protocolRefusal(request: IncomingMessage): ProtocolRefusal | null {
  const { httpVersionMajor: major, httpVersionMinor: minor } = request;
  if (major !== 1 || minor > 1) {
    return { status: 505, message: `HTTP/${major}.${minor} is not served: send HTTP/1.1 (HTTP/1.0 is served too)` };
  }
  if (minor === 1 && request.headers.host === undefined) {
    return { status: 400, message: 'the Host header is missing: an HTTP/1.1 request carries one (Host: the address you connect to)' };
  }
  const hosts = request.headersDistinct.host?.length ?? 0;
  if (hosts > 1) return { status: 400, message: `the Host header was sent ${hosts} times: send it once` };
  return null;
}

/** Writes a refusal in Slipway's `{code, message}` shape and closes the connection after it. */
export function answerProtocolRefusal(response: ServerResponse, { status, message }: ProtocolRefusal): void {
  writeAnswer(response, { status, body: { code: ERROR_CATALOGUE.INVALID_REQUEST.code, message }, headers: { connection: 'close' } });
}

/** node:http's `checkExpectation`: an Expect header it does not know, refused saying what to send. */
export function refuseExpectation(request: IncomingMessage, response: ServerResponse): void {
  answerProtocolRefusal(response, {
    status: 417,
    message: `Expect: ${quote(request.headers.expect)} is not supported: send the request without Expect, or with Expect: 100-continue`,
  });
}
