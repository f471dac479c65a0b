/**
 * Hostile requests for the fuzz suite, generated with fast-check from a seed (so that any
 * failure replays): random bytes, truncated and deeply nested JSON, wrong types in every
 * field, huge strings and arrays, invalid and non-canonical Base64, real transactions with
 * flipped bytes, wrong signature counts and bad lengths, duplicate keys, unicode, gzip
 * bodies and wrong content types, hostile Idempotency-Keys, on `/`, `/submit-batch` and the Jito-style paths.
 */
import zlib from 'node:zlib';
import fc from 'fast-check';

export interface HostileRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Which generator made it, for the report. */
  readonly kind: string;
}

const PATHS = ['/', '/submit-batch', '/api/v1/transactions', '/api/v1/bundles', '/?anti_mev=1', '/submit-batch?anti_mev=2'];
const METHODS = [
  'sendTransaction',
  'sendBundle',
  'getSignatureStatuses',
  'getBundleStatuses',
  'getInflightBundleStatuses',
  'getSubmissionStatuses',
  'getSubmission',
  'getLandingReport',
  'getBalance',
  'getAccountInfo',
  'getLatestBlockhash',
];

const json = (value: unknown) => Buffer.from(JSON.stringify(value) ?? 'null');

/** A JSON-RPC request object with hostile fields, its transactions damaged copies of `validTransactions` (also mixed into JSON-RPC batches, hostile-reads.ts). */
export function hostileRpcObject(validTransactions: readonly string[]) {
  return hostileParts(validTransactions).rpcObject;
}

function hostileParts(validTransactions: readonly string[]) {
  const valid = fc.constantFrom(...validTransactions);
  /** A real transaction's bytes, damaged in one of the ways a buggy client damages them. */
  const damaged = fc
    .tuple(
      valid,
      fc.nat(),
      fc.nat(255),
      fc.constantFrom('flip', 'truncate', 'extend', 'sigcount', 'shortvec', 'noncanonical', 'badchars', 'lookup'),
    )
    .map(([b64, at, byte, how]) => {
      const bytes = Buffer.from(b64, 'base64');
      const i = at % bytes.length;
      switch (how) {
        case 'flip':
          bytes[i] = bytes[i]! ^ (byte || 1);
          return bytes.toString('base64');
        case 'truncate':
          return bytes.subarray(0, i).toString('base64');
        case 'extend':
          return Buffer.concat([bytes, Buffer.alloc((byte % 40) + 1, byte)]).toString('base64');
        case 'sigcount':
          bytes[0] = byte % 5;
          return bytes.toString('base64');
        case 'shortvec':
          // A compact-u16 that never ends (continuation bits) where the signature count is.
          return Buffer.concat([Buffer.from([0x80, 0x80, 0x80, 0x80]), bytes.subarray(1)]).toString('base64');
        case 'noncanonical': {
          const text = bytes.toString('base64');
          return text.endsWith('=') ? text.replace(/=+$/, '') : `${text.slice(0, -1)}${text.slice(-1) === 'A' ? 'B' : 'A'}`;
        }
        case 'badchars':
          return `${b64.slice(0, i % b64.length)}!*\u00e9${b64.slice(i % b64.length)}`;
        default: {
          // A v0 marker with a lookup table section pointing nowhere.
          const message = bytes.subarray(1 + 64 * bytes[0]!);
          return Buffer.concat([
            bytes.subarray(0, 1 + 64 * bytes[0]!),
            Buffer.from([0x80]),
            message,
            Buffer.from([1, ...Buffer.alloc(32, byte), 2, 7, 9, 1, 250]),
          ]).toString('base64');
        }
      }
    });
  const transactionLike = fc.oneof(
    damaged,
    valid,
    fc.string({ maxLength: 200 }),
    fc.base64String({ maxLength: 2_000 }),
    fc.constant(''),
    fc.string({ unit: 'grapheme', maxLength: 50 }),
  );
  const anything = fc.anything({ maxDepth: 4, maxKeys: 6, withBigInt: false });
  const params = fc.oneof(
    fc.tuple(
      transactionLike,
      fc.oneof(fc.record({ encoding: fc.constantFrom('base64', 'base58', 'json', 'x') }, { requiredKeys: [] }), anything),
    ),
    fc.tuple(fc.array(transactionLike, { maxLength: 8 }), anything),
    fc.array(anything, { maxLength: 4 }),
    anything,
  );
  const rpcObject = fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), anything),
      id: fc.oneof(fc.nat(), fc.string(), fc.constant(null), anything),
      method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 80 }), anything),
      params,
    },
    { requiredKeys: [] },
  );
  return { valid, transactionLike, anything, rpcObject };
}

/** Arbitraries of hostile requests around `validTransactions` (Base64 of real signed transactions). */
export function hostileRequests(validTransactions: readonly string[]): fc.Arbitrary<HostileRequest> {
  const path = fc.constantFrom(...PATHS);
  const { valid, transactionLike, anything, rpcObject } = hostileParts(validTransactions);
  const contentType = fc.constantFrom(
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
    'application/json; charset=latin1',
  );
  const request = (kind: string, body: fc.Arbitrary<Buffer>, paths: fc.Arbitrary<string> = path) =>
    fc
      .record({ path: paths, body, type: contentType })
      .map(({ path: p, body: b, type }) => ({ kind, path: p, headers: { 'content-type': type }, body: b }));

  const batchObject = fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), anything),
      id: fc.oneof(fc.nat(), anything),
      params: fc.oneof(
        fc.record(
          { transactions: fc.oneof(fc.array(transactionLike, { maxLength: 8 }), anything), options: fc.oneof(fc.constant([]), anything) },
          { requiredKeys: [] },
        ),
        anything,
      ),
    },
    { requiredKeys: [] },
  );

  return fc.oneof(
    request(
      'random bytes',
      fc.uint8Array({ maxLength: 3_000 }).map((b) => Buffer.from(b)),
    ),
    request('json-rpc object', rpcObject.map(json)),
    request('json-rpc batch array', fc.array(rpcObject, { maxLength: 120 }).map(json)),
    request('submit-batch object', batchObject.map(json), fc.constantFrom('/submit-batch', '/submit-batch?anti_mev=1')),
    request(
      'any json',
      fc.json({ maxDepth: 6 }).map((text) => Buffer.from(text)),
    ),
    request(
      'truncated json',
      fc.tuple(rpcObject, fc.nat()).map(([value, at]) => {
        const text = JSON.stringify(value);
        return Buffer.from(text.slice(0, at % Math.max(1, text.length)));
      }),
    ),
    request(
      'deep nesting',
      fc.integer({ min: 100, max: 20_000 }).map((depth) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`)),
    ),
    request(
      'deep object',
      fc.integer({ min: 100, max: 5_000 }).map((depth) => Buffer.from(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)),
    ),
    request(
      'huge string',
      fc
        .integer({ min: 10_000, max: 200_000 })
        .map((n) => json({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: ['A'.repeat(n)] })),
    ),
    request(
      'huge array',
      fc
        .integer({ min: 100, max: 50_000 })
        .map((n) => json({ jsonrpc: '2.0', id: 1, method: 'getSignatureStatuses', params: [Array(n).fill('1')] })),
    ),
    request(
      'duplicate keys',
      fc
        .tuple(valid, anything)
        .map(([tx, other]) =>
          Buffer.from(
            `{"jsonrpc":"2.0","id":1,"method":"sendTransaction","method":${JSON.stringify(other) ?? 1},"params":[${JSON.stringify(tx)}],"params":7}`,
          ),
        ),
    ),
    request(
      'unicode',
      fc.string({ unit: 'grapheme', maxLength: 500 }).map((text) => json({ jsonrpc: '2.0', id: text, method: text, params: [text] })),
    ),
    // Idempotency-Key: hostile values, and a few repeated keys so that replays and reuses with other bodies happen.
    fc
      .tuple(
        fc.constantFrom('/', '/submit-batch', '/api/v1/bundles'),
        fc.oneof(
          rpcObject.map(json),
          batchObject.map(json),
          valid.map((tx) => json({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx] })),
        ),
        fc.oneof(
          fc.constantFrom('k1', 'k2', 'k3'),
          fc.string({
            // Visible ASCII and Latin-1 (what a header may carry; DEL may not, and fetch refuses it before sending).
            unit: fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c)),
            minLength: 1,
            maxLength: 400,
          }),
        ),
      )
      .map(([p, body, key]) => ({
        kind: 'idempotency key',
        path: p,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body,
      })),
    fc.tuple(path, rpcObject).map(([p, value]) => ({
      kind: 'gzip body',
      path: p,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: zlib.gzipSync(json(value)),
    })),
    fc.tuple(path, rpcObject).map(([p, value]) => ({
      kind: 'unknown encoding',
      path: p,
      headers: { 'content-type': 'application/json', 'content-encoding': 'br, zstd' },
      body: json(value),
    })),
  );
}
