/**
 * Lean HTTP's reader (lean-http.ts): one HTTP/1.1 request at the start of a buffer, if it
 * is complete and inside a deliberately narrow form, the one submission clients send:
 *
 *   POST / HTTP/1.1  (or POST /submit-batch HTTP/1.1)
 *   one Host, one Content-Length (digits, within the body limit), a Content-Type, one
 *   x-api-key; at most one x-request-id; Connection keep-alive or close; Content-Encoding
 *   identity; names that are tokens, values of visible ASCII, spaces and tabs, every line
 *   ended by CRLF; the body exactly Content-Length bytes.
 *
 * Anything else, however legitimate (Transfer-Encoding, Expect, Upgrade, a second
 * Content-Length, obs-fold, bytes above 0x7E, a bare LF, a query string, HTTP/1.0, a
 * header block over Node's limit, repeated headers), is `other`: the connection goes to
 * node:http, which answers it as it always has. This reader never stretches a rule; where
 * it could disagree with node:http about where a request ends, it declines.
 */

/** A request's head, read whole; its body may still be on its way. */
export interface LeanHead {
  readonly path: '/' | '/submit-batch';
  readonly apiKey: string;
  readonly requestId: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly keepAlive: boolean;
  /** The bytes the request takes in the buffer (head and body). */
  readonly length: number;
  /** Where the body starts. */
  readonly bodyStart: number;
}

export interface LeanRequest extends LeanHead {
  readonly body: Buffer;
}

export type LeanRead = LeanRequest | 'incomplete' | 'other';

/** A request whose body has all arrived, or `incomplete`, or `other` (see readLeanHead). */
export function readLeanRequest(buffer: Buffer, maxHeadBytes: number, bodyLimit: number): LeanRead {
  const head = readLeanHead(buffer, maxHeadBytes, bodyLimit);
  if (typeof head !== 'object') return head;
  if (buffer.length < head.length) return 'incomplete';
  return { ...head, body: buffer.subarray(head.bodyStart, head.length) };
}

/** At most this many header lines: a submission sends a handful. */
const MAX_HEADERS = 64;

const LINE_POST_ROOT = 'POST / HTTP/1.1';
const LINE_POST_BATCH = 'POST /submit-batch HTTP/1.1';

/** RFC 9110 token characters, for header names. */
const TOKEN = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN[c.charCodeAt(0)] = 1;

/** Where the head ends (the index after CRLF CRLF), -1 while it has not arrived. */
function headEnd(buffer: Buffer, limit: number): number {
  const at = buffer.indexOf('\r\n\r\n', 0, 'latin1');
  if (at === -1 || at + 4 > limit) return -1;
  return at + 4;
}

/**
 * Reads the head of the request at the start of `buffer`: `incomplete` until it has all
 * arrived. `maxHeadBytes`: the most a head may be (a larger one is node:http's to judge);
 * `bodyLimit`: the most a body may be.
 */
export function readLeanHead(buffer: Buffer, maxHeadBytes: number, bodyLimit: number): LeanHead | 'incomplete' | 'other' {
  const end = headEnd(buffer, maxHeadBytes);
  if (end === -1) return buffer.length >= maxHeadBytes ? 'other' : 'incomplete';
  const head = buffer.toString('latin1', 0, end - 4);
  const lines = head.split('\r\n');
  const requestLine = lines[0];
  const path = requestLine === LINE_POST_ROOT ? '/' : requestLine === LINE_POST_BATCH ? '/submit-batch' : undefined;
  if (path === undefined || lines.length - 1 > MAX_HEADERS) return 'other';

  let contentLength: number | undefined;
  let contentType = false;
  let host = false;
  let apiKey: string | undefined;
  let requestId: string | undefined;
  let idempotencyKey: string | undefined;
  let keepAlive = true;
  let encoding = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return 'other';
    for (let c = 0; c < colon; c++) {
      const code = line.charCodeAt(c);
      if (code >= 128 || TOKEN[code] !== 1) return 'other';
    }
    for (let c = colon + 1; c < line.length; c++) {
      const code = line.charCodeAt(c);
      if ((code < 0x20 && code !== 0x09) || code > 0x7e) return 'other';
    }
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    switch (name) {
      case 'content-length':
        // No tab around the digits: Node 20's parser refuses one after them (400).
        if (contentLength !== undefined || !/^\d{1,9}$/.test(value) || line.includes('\t', colon)) return 'other';
        contentLength = Number(value);
        if (contentLength > bodyLimit) return 'other';
        break;
      case 'content-type':
        if (contentType) return 'other';
        contentType = true;
        break;
      case 'host':
        if (host) return 'other';
        host = true;
        break;
      case 'x-api-key':
        if (apiKey !== undefined) return 'other';
        apiKey = value;
        break;
      case 'x-request-id':
        if (requestId !== undefined) return 'other';
        requestId = value;
        break;
      case 'idempotency-key':
        if (idempotencyKey !== undefined) return 'other';
        idempotencyKey = value;
        break;
      case 'connection': {
        const token = value.toLowerCase();
        if (token === 'close') keepAlive = false;
        else if (token !== 'keep-alive') return 'other';
        break;
      }
      case 'content-encoding':
        // Exactly as the fast path reads it: one header, `identity` in lower case (anything else is refused there).
        if (encoding || value !== 'identity') return 'other';
        encoding = true;
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
      case 'trailer':
      case 'te':
        return 'other';
      default:
        break;
    }
  }
  if (contentLength === undefined || !contentType || !host || apiKey === undefined) return 'other';
  return { path, apiKey, requestId, idempotencyKey, keepAlive, bodyStart: end, length: end + contentLength };
}
