/**
 * Hostile HTTP/1.x requests as raw bytes, generated with fast-check from a seed: odd request
 * targets (`//`, `http://[::1`, `*`, absolute URIs, `%00`, `..`, very long, unicode), odd
 * methods and versions, duplicate, oversized and invalid headers, bodies framed by a wrong
 * Content-Length or bad chunks, pipelined requests, with the API key in every place it may
 * be (x-api-key, `?api-key=`, Jito's `x-jito-auth` and `uuid`), in a wrong one, or none.
 * And the plain grid: every method on every path, well formed, with and without a key.
 *
 * Each request says what its answers are checked against: whether any HTTP/1.1 parser
 * takes it (then it must be answered, never dropped), and, per pipelined request, whether it
 * is a POST to a path that needs a key and whether it carries the key somewhere (a 2xx
 * there without one would be a way round authentication).
 */
import http from 'node:http';
import fc from 'fast-check';

export interface RawRequest {
  readonly kind: string;
  readonly bytes: Buffer;
  /** One per request in `bytes`, in order. */
  readonly requests: readonly { readonly method: string; readonly keyed: boolean; readonly credential: boolean }[];
  /** Built only of parts every HTTP/1.1 parser takes: it must be answered, never closed unanswered. */
  readonly wellFormed: boolean;
}

/** Every path the gateway serves, and a few it does not. */
export const ALL_PATHS = [
  '/',
  '/submit-batch',
  '/api/v1/transactions',
  '/api/v1/bundles',
  '/health',
  '/metrics',
  '/dashboard',
  '/dashboard/events',
  '/api/v1/bundles/tip_floor',
  '/api/v1/bundles/tip_stream',
  '/nope',
  '/api/v1',
];
/** Paths whose POSTs need an API key. */
const KEYED_PATHS = new Set(['/', '/submit-batch', '/api/v1/transactions', '/api/v1/bundles']);
/** Paths whose reads need an API key: Jito's tip floor. */
const KEYED_READ_PATHS = new Set(['/api/v1/bundles/tip_floor']);
/** Whether a request needs a key to be answered with a 2xx. */
const isKeyed = (method: string, path: string): boolean =>
  (method === 'POST' && KEYED_PATHS.has(path)) || ((method === 'GET' || method === 'HEAD') && KEYED_READ_PATHS.has(path));
export const WELL_FORMED_METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'OPTIONS',
  'PATCH',
  'TRACE',
  'CONNECT',
  'PROPFIND',
  'SEARCH',
  'PURGE',
];
const GARBAGE_METHODS = ['get', 'FOO', 'G ET', '', 'GET\0', 'POST\t', 'X'.repeat(300), 'PRI', 'HTTP/1.1', 'GETT'];

/** A piece of a request and whether every parser takes it. */
interface Piece {
  readonly text: string;
  readonly wf: boolean;
}
const good = (...texts: string[]) => fc.constantFrom(...texts.map((text): Piece => ({ text, wf: true })));
const bad = (...texts: string[]) => fc.constantFrom(...texts.map((text): Piece => ({ text, wf: false })));
/** Text with its UTF-8 bytes kept as bytes when the request is written out as latin1. */
const utf8 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';

function bodies(key: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(GET_SLOT),
    fc.constant(''),
    fc.constant('[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getHealth"}]'),
    fc.constant('{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["AAAA",{"encoding":"base64"}]}'),
    fc.constant(`{"jsonrpc":"2.0","id":1,"params":{"transactions":["AAAA"],"options":[]},"key":"${key}"}`),
    fc.json({ maxDepth: 3 }),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
    fc.constant('x'.repeat(70_000)),
  );
}

function targets(key: string): fc.Arbitrary<Piece> {
  const query = fc.constantFrom(
    '',
    '',
    `?api-key=${key}`,
    '?api-key=slw_wrong',
    `?uuid=${key}`,
    '?api-key=',
    `?api-key=${key}&api-key=x`,
    '?anti_mev=1',
    '?anti_mev=2',
    '?token=x',
    '?api-key=%ZZ',
    '?a[b]=1',
    `?api-key=${key}&anti_mev=true`,
    '?',
  );
  const path = fc.constantFrom(
    ...ALL_PATHS,
    '//',
    '/health/',
    '/HEALTH',
    '/submit-batch/',
    '/index.html',
    '/.env',
    '/%2e%2e/health',
    '/..',
    '/a/../health',
    '/%00',
    '/%',
    '/%ZZ',
    '/%E9',
    '/%C0%AE',
    '/api/v1/',
    '/;',
    '/submit-batch;x',
  );
  return fc.oneof(
    { weight: 10, arbitrary: fc.tuple(path, query).map(([p, q]): Piece => ({ text: `${p}${q}`, wf: true })) },
    {
      weight: 2,
      arbitrary: good(
        '*',
        'http://x/health',
        'http://[::1',
        'https://127.0.0.1:99999/',
        `http://x:80/?api-key=${key}`,
        '//health',
        '/#frag',
        'http://x',
        'x',
        '?api-key=x',
        '/\\..\\',
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(100, 5_000, 20_000).map((n): Piece => ({ text: `/${'a'.repeat(n)}`, wf: true })) },
    { weight: 1, arbitrary: fc.constantFrom(100, 3_000).map((n): Piece => ({ text: `/?${'&'.repeat(n)}`, wf: true })) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map((s): Piece => ({ text: `/${utf8(s)}`, wf: false })),
    },
    { weight: 1, arbitrary: bad('', '/a b', '/\t', '/\0', '/\r', 'GET') },
  );
}

function headerLines(key: string): fc.Arbitrary<Piece[]> {
  const host = fc.oneof(
    { weight: 8, arbitrary: good('Host: x\r\n', 'Host: 127.0.0.1:8080\r\n') },
    good('', 'Host: x\r\nHost: y\r\n', `Host: ${'a'.repeat(5_000)}\r\n`, 'Host:\r\n'),
  );
  const auth = good(
    '',
    `x-api-key: ${key}\r\n`,
    `x-api-key: ${key}\r\n`,
    'x-api-key: slw_wrong\r\n',
    'x-api-key:\r\n',
    `x-api-key: ${key}\r\nx-api-key: ${key}\r\n`,
    `X-API-KEY: ${key}\r\n`,
    `x-jito-auth: ${key}\r\n`,
    'x-jito-auth: wrong\r\n',
    `x-api-key: wrong\r\nx-jito-auth: ${key}\r\n`,
    'authorization: Bearer x\r\n',
    `authorization: Bearer ${key}\r\n`,
  );
  const extra = fc.oneof(
    {
      weight: 16,
      arbitrary: good(
        'content-type: application/json\r\n',
        'content-type: text/plain\r\n',
        'content-type: multipart/form-data; boundary=x\r\n',
        'content-type: application/json; charset=utf-16\r\n',
        'content-encoding: gzip\r\n',
        'content-encoding: identity\r\n',
        'content-encoding: br, zstd\r\n',
        'x-request-id: ok-id.1:2\r\n',
        `x-request-id: ${'a'.repeat(65)}\r\n`,
        'x-request-id: <script>\r\n',
        'expect: 100-continue\r\n',
        'expect: garbage\r\n',
        'connection: close\r\n',
        'connection: keep-alive\r\n',
        'connection: TE, close\r\n',
        'connection: upgrade\r\nupgrade: h2c\r\n',
        'x-forwarded-for: 1.2.3.4\r\n',
        'forwarded: for=1.2.3.4\r\n',
        'x-real-ip: 1.2.3.4\r\n',
        `cookie: ${'a'.repeat(8_000)}\r\n`,
        'accept-encoding: gzip, br\r\n',
        'te: trailers\r\n',
        'range: bytes=0-1\r\n',
        'origin: null\r\n',
        `user-agent: ${'u'.repeat(2_000)}\r\n`,
        'keep-alive: timeout=0\r\n',
        'accept: */*\r\n',
        `x-long: ${'v'.repeat(20_000)}\r\n`,
        Array.from({ length: 500 }, (_, i) => `x-h${i}: ${i}\r\n`).join(''),
      ),
    },
    bad(
      'Foo Bar: x\r\n',
      'foo\r\n',
      ': empty-name\r\n',
      'x-nul: a\0b\r\n',
      'x-cr: a\rb\r\n',
      'x-fold: a\r\n  folded\r\n',
      '\x7f: x\r\n',
      'x-lf: a\nb: c\r\n',
    ),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map((s): Piece => ({ text: `x-unicode: ${utf8(s)}\r\n`, wf: false })),
  );
  return fc.tuple(host, auth, fc.array(extra, { maxLength: 4 })).map(([h, a, e]) => [h, a, ...e]);
}

/** A body and the headers that frame it, rightly or wrongly. */
function framings(key: string): fc.Arbitrary<Piece> {
  return fc
    .tuple(
      bodies(key),
      fc.nat(),
      fc.integer({ min: 1, max: 40 }),
      fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...GOOD_FRAMINGS) }, fc.constantFrom(...BAD_FRAMINGS)),
    )
    .map(([body, at, step, how]): Piece => {
      const length = Buffer.byteLength(body, 'latin1');
      const chunked = (chunks: string) => ({
        text: `transfer-encoding: chunked\r\n\r\n${chunks}`,
        wf: how === 'chunked' || how === 'chunked with extensions and trailers',
      });
      const chunksOf = (extension: string) => {
        let out = '';
        for (let i = 0; i < length; i += step)
          out += `${Math.min(step, length - i).toString(16)}${extension}\r\n${body.slice(i, i + step)}\r\n`;
        return out;
      };
      switch (how) {
        case 'none':
          return { text: '\r\n', wf: true };
        case 'length':
          return { text: `content-length: ${length}\r\n\r\n${body}`, wf: true };
        case 'length too small':
          return { text: `content-length: ${at % Math.max(1, length)}\r\n\r\n${body}`, wf: false };
        case 'length too large':
          return { text: `content-length: ${length + 1 + (at % 100)}\r\n\r\n${body}`, wf: false };
        case 'length odd':
          return {
            text: `content-length: ${['-1', '1e3', ' 5', '5, 5', '99999999999999999999', '0x10', '', 'abc'][at % 8]}\r\n\r\n${body}`,
            wf: false,
          };
        case 'two lengths':
          return { text: `content-length: ${length}\r\ncontent-length: ${length + 1}\r\n\r\n${body}`, wf: false };
        case 'chunked':
          return chunked(`${chunksOf('')}0\r\n\r\n`);
        case 'chunked with extensions and trailers':
          return chunked(`${chunksOf(';a=b')}0\r\nx-trailer: 1\r\n\r\n`);
        case 'chunk size not hex':
          return chunked(`zz\r\n${body}\r\n0\r\n\r\n`);
        case 'chunk larger than its data':
          return chunked(`${(length + 10).toString(16)}\r\n${body}\r\n0\r\n\r\n`);
        case 'chunk without CRLF':
          return chunked(`${length.toString(16)}\r\n${body}0\r\n\r\n`);
        case 'chunk size huge':
          return chunked(`ffffffffffffffffff\r\n${body}\r\n0\r\n\r\n`);
        case 'chunk size negative':
          return chunked(`-1\r\n${body}\r\n0\r\n\r\n`);
        case 'no last chunk':
          return chunked(chunksOf(''));
        case 'chunks with LF only':
          return chunked(chunksOf('').replaceAll('\r\n', '\n') + '0\n\n');
        case 'chunked and a length':
          return { text: `content-length: ${length}\r\ntransfer-encoding: chunked\r\n\r\n${chunksOf('')}0\r\n\r\n`, wf: false };
        default:
          // Transfer-Encoding values that are not (only) chunked.
          return {
            text: `transfer-encoding: ${['gzip, chunked', 'chunked, gzip', 'identity', 'xchunked', 'chunked\r\ntransfer-encoding: chunked'][at % 5]}\r\n\r\n${chunksOf('')}0\r\n\r\n`,
            wf: false,
          };
      }
    });
}
const GOOD_FRAMINGS = ['none', 'length', 'chunked', 'chunked with extensions and trailers'] as const;
const BAD_FRAMINGS = [
  'length too small',
  'length too large',
  'length odd',
  'two lengths',
  'chunk size not hex',
  'chunk larger than its data',
  'chunk without CRLF',
  'chunk size huge',
  'chunk size negative',
  'no last chunk',
  'chunks with LF only',
  'chunked and a length',
  'transfer-encoding other',
] as const;

/** One request's parts, its text, and what its answer is checked against. */
function oneRequest(key: string) {
  const method = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.constantFrom(...WELL_FORMED_METHODS, 'POST', 'POST', 'POST', 'GET').map((text): Piece => ({ text, wf: true })),
    },
    bad(...GARBAGE_METHODS),
  );
  const version = fc.oneof(
    { weight: 10, arbitrary: good('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0') },
    bad('HTTP/0.9', 'HTTP/2.0', 'HTTP/1.2', 'HTTP/1.1 x', 'http/1.1', 'HTTP/11', '', 'HTTP/9.9', 'HTTP/1.1\0'),
  );
  return fc
    .tuple(
      method,
      targets(key),
      version,
      headerLines(key),
      framings(key),
      fc.oneof({ weight: 12, arbitrary: fc.constant('CRLF') }, fc.constant('LF')),
    )
    .map(([m, t, v, headers, framing, endings]) => {
      let text = `${m.text} ${t.text}${v.text === '' ? '' : ` ${v.text}`}\r\n${headers.map((h) => h.text).join('')}${framing.text}`;
      if (endings === 'LF') text = text.replaceAll('\r\n', '\n');
      const path = t.text.split('?')[0]!;
      const shape = `${m.wf ? m.text : 'garbage method'} ${t.text.length > 40 ? `${t.text.slice(0, 20)}…(${t.text.length})` : t.text}`;
      return {
        text,
        method: m.text,
        keyed: isKeyed(m.text, path),
        credential: text.includes(key),
        wf: m.wf && t.wf && v.wf && headers.every((h) => h.wf) && framing.wf && endings === 'CRLF',
        shape,
      };
    });
}

/** Raw requests: one, or up to four pipelined in one write. */
export function hostileRawRequests(key: string): fc.Arbitrary<RawRequest> {
  const single = oneRequest(key).map((r) => [r]);
  return fc.oneof({ weight: 4, arbitrary: single }, fc.array(oneRequest(key), { minLength: 2, maxLength: 4 })).map((all) => ({
    kind: all.length === 1 ? all[0]!.shape : `pipelined ×${all.length}: ${all[0]!.shape}`,
    bytes: Buffer.from(all.map((r) => r.text).join(''), 'latin1'),
    requests: all.map(({ method, keyed, credential }) => ({ method, keyed, credential })),
    wellFormed: all.every((r) => r.wf),
  }));
}

/** Every method on every path: well-formed HTTP/1.1, the key in each place it may be (or none, or a wrong one), with or without a body. */
export function methodsOnPaths(key: string): fc.Arbitrary<RawRequest> {
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...WELL_FORMED_METHODS) },
    fc.constantFrom(...http.METHODS),
    fc.constant('FOO'),
  );
  const auth = fc.constantFrom('none', 'x-api-key', '?api-key=', 'x-jito-auth', '?uuid=', 'wrong key');
  const body = fc.constantFrom('', GET_SLOT, '[1,2]', 'garbage', '{"jsonrpc":"2.0","id":1,"params":{"transactions":[],"options":[]}}');
  return fc.tuple(method, fc.constantFrom(...ALL_PATHS), auth, body).map(([m, path, how, b]) => {
    const query = how === '?api-key=' ? `?api-key=${key}` : how === '?uuid=' ? `?uuid=${key}` : '';
    const header =
      how === 'x-api-key'
        ? `x-api-key: ${key}\r\n`
        : how === 'x-jito-auth'
          ? `x-jito-auth: ${key}\r\n`
          : how === 'wrong key'
            ? 'x-api-key: slw_wrong\r\n'
            : '';
    const text = `${m} ${path}${query} HTTP/1.1\r\nHost: x\r\n${header}${b === '' ? '' : `content-type: application/json\r\ncontent-length: ${b.length}\r\n`}\r\n${b}`;
    return {
      kind: `${m} ${path} (${how}${b === '' ? '' : ', body'})`,
      bytes: Buffer.from(text, 'latin1'),
      requests: [{ method: m, keyed: isKeyed(m, path), credential: how !== 'none' && how !== 'wrong key' }],
      wellFormed: m !== 'FOO',
    };
  });
}
