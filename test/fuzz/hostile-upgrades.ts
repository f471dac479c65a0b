/**
 * Hostile WebSocket upgrade requests, generated with fast-check from a seed, for both
 * listeners (the main port and port + 1): every path and odd targets, good and bad
 * Sec-WebSocket-Key and -Version (missing, short, repeated, other versions), other Upgrade
 * protocols, broken Connection headers, odd subprotocols and extensions, methods other than
 * GET, HTTP/1.0, bodies, and the API key in the header, the query, a wrong one or none.
 *
 * Each request says whether it may open a socket (`mayOpen`): a 101 is right only for a
 * GET over HTTP/1.1 with a well-formed key, version 13 (or 8, which ws also takes), and
 * the API key where the WebSocket door looks for it (x-api-key, else `?api-key=`).
 */
import crypto from 'node:crypto';
import fc from 'fast-check';
import { ALL_PATHS, WELL_FORMED_METHODS } from './hostile-raw-requests';

export interface UpgradeRequest {
  readonly kind: string;
  readonly bytes: Buffer;
  readonly method: string;
  /** The Sec-WebSocket-Key sent (the first one), to check Sec-WebSocket-Accept. */
  readonly wsKey: string | undefined;
  readonly mayOpen: boolean;
  /** Built only of parts every HTTP/1.1 parser takes: it must be answered, never closed unanswered. */
  readonly wellFormed: boolean;
}

const KEY_FORMAT = /^[+/0-9A-Za-z]{22}==$/;

/** What a server must answer in Sec-WebSocket-Accept for `key` (RFC 6455 §4.2.2). */
export const acceptFor = (key: string) => crypto.createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');

/** The API key the WebSocket door reads from this request: x-api-key (repeats joined, as Node joins them), else `?api-key=`. */
function presentedKey(target: string, apiKeyHeaders: string[]): string | undefined | null {
  if (apiKeyHeaders.length > 0) return apiKeyHeaders.join(', ');
  try {
    return new URL(target, 'http://slipway').searchParams.get('api-key') ?? undefined;
  } catch {
    return null; // the target is refused before the key is looked at
  }
}

export function hostileUpgrades(key: string): fc.Arbitrary<UpgradeRequest> {
  const wsKey = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64'));
  const keyHeader = fc.oneof(
    { weight: 6, arbitrary: wsKey.map((k) => [k]) },
    fc.constantFrom<string[]>(
      [],
      ['short'],
      [''],
      ['dGhlIHNhbXBsZSBub25jZQ== '],
      ['!!!!!!!!!!!!!!!!!!!!!!=='],
      ['dGhlIHNhbXBsZSBub25jZQ'],
      ['a'.repeat(5_000)],
    ),
    fc.tuple(wsKey, wsKey).map(([a, b]) => [a, b]),
  );
  const version = fc.oneof(
    { weight: 6, arbitrary: fc.constant<string[]>(['13']) },
    fc.constantFrom<string[]>(['8'], ['7'], ['14'], ['abc'], [''], [], ['13, 8'], ['13', '13'], ['0x0d'], ['13.0'], ['-13']),
  );
  const upgrade = fc.oneof(
    { weight: 6, arbitrary: fc.constant('websocket') },
    fc.constantFrom('WebSocket', 'WEBSOCKET', 'h2c', 'websocket, h2c', '', 'web socket', 'websocket\0', undefined),
  );
  const connection = fc.oneof(
    { weight: 6, arbitrary: fc.constant('Upgrade') },
    fc.constantFrom('upgrade', 'keep-alive, Upgrade', 'close', 'Upgrade, close', 'keep-alive', 'Upgrade, Upgrade', undefined),
  );
  const apiKey = fc.constantFrom<string[]>([key], [key], [], ['slw_wrong'], [''], [key, key], ['slw_wrong', key]);
  const query = fc.constantFrom(
    '',
    '',
    `?api-key=${key}`,
    `?api-key=${key}`,
    '?api-key=slw_wrong',
    `?uuid=${key}`,
    '?api-key=',
    '?api-key=%ZZ',
    `?api-key=${encodeURIComponent(key)}&api-key=x`,
    '?%',
  );
  const target = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...ALL_PATHS), query).map(([p, q]) => `${p}${q}`) },
    fc
      .tuple(
        fc.constantFrom(
          '//',
          'http://[::1',
          '*',
          'http://x/',
          `http://x:99999/?api-key=${key}`,
          '/%00',
          '/..',
          '/%',
          `/${'a'.repeat(8_000)}`,
          '/\u00e9',
        ),
        query,
      )
      .map(([p, q]) => `${p}${q}`),
  );
  const extras = fc.array(
    fc.constantFrom(
      'Sec-WebSocket-Protocol: chat\r\n',
      'Sec-WebSocket-Protocol: ,,,\r\n',
      'Sec-WebSocket-Protocol: a b\r\n',
      'Sec-WebSocket-Protocol: chat, chat\r\n',
      'Sec-WebSocket-Extensions: permessage-deflate\r\n',
      'Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=99\r\n',
      'Sec-WebSocket-Extensions: ;;=\r\n',
      'Sec-WebSocket-Extensions: x-unknown; a="b\r\n',
      'Origin: null\r\n',
      `Origin: http://${'o'.repeat(3_000)}\r\n`,
      `x-jito-auth: ${key}\r\n`,
      'Authorization: Bearer x\r\n',
      'x-forwarded-for: 1.2.3.4\r\n',
      `x-long: ${'v'.repeat(20_000)}\r\n`,
    ),
    { maxLength: 3 },
  );
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constant('GET') },
    fc.constantFrom('POST', 'HEAD', 'PUT', 'OPTIONS', 'CONNECT', 'get', 'FOO'),
  );
  const httpVersion = fc.oneof({ weight: 8, arbitrary: fc.constant('HTTP/1.1') }, fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9'));
  const body = fc.constantFrom(
    '',
    '',
    '',
    'content-length: 5\r\n\r\nhello',
    'transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    'content-length: 6\r\n\r\n\x81\x80\0\0\0\0',
  );
  const host = fc.constantFrom('Host: x\r\n', 'Host: x\r\n', 'Host: x\r\n', '');

  return fc.record({ method, target, httpVersion, keyHeader, version, upgrade, connection, apiKey, extras, body, host }).map((r) => {
    const lines = [
      r.host,
      r.connection === undefined ? '' : `Connection: ${r.connection}\r\n`,
      r.upgrade === undefined ? '' : `Upgrade: ${r.upgrade}\r\n`,
      ...r.version.map((v) => `Sec-WebSocket-Version: ${v}\r\n`),
      ...r.keyHeader.map((k) => `Sec-WebSocket-Key: ${k}\r\n`),
      ...r.apiKey.map((k) => `x-api-key: ${k}\r\n`),
      ...r.extras,
    ];
    const text = `${r.method} ${r.target} ${r.httpVersion}\r\n${lines.join('')}${r.body === '' ? '\r\n' : r.body}`;
    // Node strips the whitespace around header values.
    const presented = presentedKey(
      r.target,
      r.apiKey.map((k) => k.trim()),
    );
    const sentKey = r.keyHeader.length === 1 ? r.keyHeader[0]!.trim() : undefined;
    const mayOpen =
      r.method === 'GET' &&
      r.httpVersion === 'HTTP/1.1' &&
      /\bupgrade\b/i.test(r.connection ?? '') &&
      r.upgrade?.toLowerCase() === 'websocket' &&
      sentKey !== undefined &&
      KEY_FORMAT.test(sentKey) &&
      r.version.length === 1 &&
      // ws reads the version as a number (so `13.0` and `0x0d` are 13), and takes 8 as well as 13.
      [13, 8].includes(Number(r.version[0]!.trim() || 'x')) &&
      presented === key;
    const where = r.apiKey.length > 0 ? `x-api-key ×${r.apiKey.length}` : r.target.includes('api-key=') ? '?api-key=' : 'no key';
    return {
      kind: `${r.method} ${r.target.length > 40 ? `${r.target.slice(0, 20)}…(${r.target.length})` : r.target.replace(key, 'KEY')} ${r.httpVersion} (${where}; version ${r.version.join('+') || 'none'}; upgrade ${r.upgrade ?? 'none'})`,
      bytes: Buffer.from(text, 'latin1'),
      method: r.method,
      wsKey: r.keyHeader[0]?.trim(),
      mayOpen,
      wellFormed:
        WELL_FORMED_METHODS.includes(r.method) &&
        (r.httpVersion === 'HTTP/1.1' || r.httpVersion === 'HTTP/1.0') &&
        /^[\x20-\x7e\r\n]*$/.test(lines.join('') + r.target),
    };
  });
}
