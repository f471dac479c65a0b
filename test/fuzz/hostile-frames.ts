/**
 * Hostile WebSocket traffic for an authenticated socket, generated with fast-check from a
 * seed. Messages: every field of Solana's PubSub requests (jsonrpc, id, method, params, the
 * signature, the commitment option) with every JSON type, unknown and prototype-named
 * methods, non-objects, batches, duplicate keys; sent as text, binary or in fragments.
 * Control frames: pings and pongs with odd payloads, closes with odd codes and reasons.
 * And raw frames that ws's own client would never write: invalid UTF-8 (whole, split across
 * fragments, in a close reason), frames over the 64 KiB limit or claiming 2^63 bytes,
 * unmasked, reserved bits and opcodes, long or fragmented control frames, continuations
 * with nothing to continue, a message begun inside another.
 *
 * What each action expects: a message gets exactly one answer; a ping its pong; a close
 * its close; raw frames are sent on a socket of their own, followed by a probe request,
 * and must end in an answer to the probe or a close with a protocol code.
 */
import bs58 from 'bs58';
import fc from 'fast-check';

export type FrameAction =
  | {
      readonly type: 'message';
      readonly kind: string;
      readonly data: string | Buffer;
      readonly binary: boolean;
      readonly parts: number;
      readonly unsubscribeOwn?: 'signatureUnsubscribe' | 'slotUnsubscribe';
    }
  | { readonly type: 'ping' | 'pong'; readonly kind: string; readonly data: Buffer }
  | { readonly type: 'close'; readonly kind: string; readonly code: number; readonly reason: string }
  | { readonly type: 'raw'; readonly kind: string; readonly frames: readonly Buffer[]; readonly mayStall?: boolean };

export const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

export interface FrameSpec {
  readonly opcode: number;
  readonly payload: Buffer;
  readonly fin?: boolean;
  /** RSV1-3 as three bits. */
  readonly rsv?: number;
  readonly masked?: boolean;
  /** The length field: the shortest form (RFC 6455 §5.2), a longer one, or a value that is not the payload's. */
  readonly length?: 'minimal' | '16' | '64' | bigint;
}

/** One client frame, masked unless told not to (with a fixed key: the bytes replay). */
export function encodeFrame({ opcode, payload, fin = true, rsv = 0, masked = true, length = 'minimal' }: FrameSpec): Buffer {
  const n = payload.length;
  const first = (fin ? 0x80 : 0) | ((rsv & 7) << 4) | (opcode & 0x0f);
  const maskBit = masked ? 0x80 : 0;
  let head: Buffer;
  if (typeof length === 'bigint' || length === '64' || (length === 'minimal' && n > 0xffff)) {
    head = Buffer.alloc(10);
    head[1] = maskBit | 127;
    head.writeBigUInt64BE(typeof length === 'bigint' ? length : BigInt(n), 2);
  } else if (length === '16' || n > 125) {
    head = Buffer.alloc(4);
    head[1] = maskBit | 126;
    head.writeUInt16BE(n, 2);
  } else {
    head = Buffer.alloc(2);
    head[1] = maskBit | n;
  }
  head[0] = first;
  if (!masked) return Buffer.concat([head, payload]);
  const mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i] = body[i]! ^ mask[i % 4]!;
  return Buffer.concat([head, mask, body]);
}

const closePayload = (code: number, reason: Buffer) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(code);
  return Buffer.concat([b, reason]);
};

const METHODS = [
  'signatureSubscribe',
  'signatureUnsubscribe',
  'slotSubscribe',
  'slotUnsubscribe',
  'submissionSubscribe',
  'submissionUnsubscribe',
];
const OTHER_METHODS = [
  'accountSubscribe',
  'logsSubscribe',
  'programSubscribe',
  'rootSubscribe',
  'slotsUpdatesSubscribe',
  'voteSubscribe',
  'blockSubscribe',
  'getSlot',
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '',
  ' signatureSubscribe',
  'SIGNATURESUBSCRIBE',
];
const INVALID_UTF8 = [
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
];
const GET_SLOT_REQUEST = '{"jsonrpc":"2.0","id":"m","method":"slotUnsubscribe","params":[999999999]}';

/** `knownSignatures`: signatures of real transactions (base58), so that some subscriptions are notified. */
export function hostileFrames(knownSignatures: readonly string[]): fc.Arbitrary<FrameAction> {
  const anything = fc.anything({ maxDepth: 3, maxKeys: 5, withBigInt: false });
  const signature = fc.oneof(
    { weight: 5, arbitrary: fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => bs58.encode(b)) },
    { weight: 2, arbitrary: fc.constantFrom(...knownSignatures) },
    fc.uint8Array({ minLength: 1, maxLength: 100 }).map((b) => bs58.encode(b)),
    fc.constantFrom('', '0OIl', '1'.repeat(88), '1'.repeat(89), 'z'.repeat(60_000), '\u0000', '11111111111111111111111111111111'),
    fc.string({ unit: 'grapheme', maxLength: 90 }),
    anything,
  );
  const commitment = fc.oneof(
    fc.constantFrom(
      'processed',
      'confirmed',
      'finalized',
      'toString',
      '__proto__',
      'constructor',
      'hasOwnProperty',
      'recent',
      'max',
      'single',
      '',
      'FINALIZED',
    ),
    anything,
  );
  const config = fc.oneof(
    fc.record({ commitment, enableReceivedNotification: fc.oneof(fc.boolean(), anything) }, { requiredKeys: [] }),
    fc.constantFrom(
      undefined,
      null,
      'confirmed',
      5,
      [],
      { commitment: { toString: 1 } },
      JSON.parse('{"__proto__":{"commitment":"processed"}}'),
    ),
    anything,
  );
  const subscriptionId = fc.oneof(
    fc.integer({ min: 1, max: 5_000 }),
    fc.constantFrom(0, -1, 1.5, 2 ** 53, 1e300, '1', null, true, [1], { id: 1 }),
    anything,
  );
  const eventId = fc.oneof(
    fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => `evt_${Buffer.from(b).toString('hex')}`),
    fc.constantFrom('evt_', 'evt_' + 'g'.repeat(32), 'EVT_' + '0'.repeat(32), '__proto__'),
    anything,
  );
  const filter = fc.oneof(
    fc.record(
      {
        signature,
        bundleId: fc.oneof(
          fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
          anything,
        ),
        lastEventId: eventId,
        extra: anything,
      },
      { requiredKeys: [] },
    ),
    fc.constantFrom({}, null, [], 'all', JSON.parse('{"__proto__":{"signature":"1"}}'), { constructor: 1 }),
    anything,
  );
  const params = (method: unknown) =>
    method === 'submissionSubscribe'
      ? fc.oneof({ weight: 4, arbitrary: filter.map((f) => [f]) }, fc.array(anything, { maxLength: 3 }), fc.constant([]), anything)
      : method === 'signatureSubscribe'
        ? fc.oneof(
            { weight: 4, arbitrary: fc.tuple(signature, config).map(([s, c]) => (c === undefined ? [s] : [s, c])) },
            fc.array(anything, { maxLength: 3 }),
            anything,
          )
        : method === 'signatureUnsubscribe' || method === 'slotUnsubscribe' || method === 'submissionUnsubscribe'
          ? fc.oneof({ weight: 3, arbitrary: subscriptionId.map((id) => [id]) }, fc.array(anything, { maxLength: 3 }), anything)
          : fc.oneof(fc.constant(undefined), fc.constant([]), fc.array(anything, { maxLength: 3 }), anything);
  const id = fc.oneof(
    fc.nat(),
    fc.integer(),
    fc.double(),
    fc.string({ maxLength: 20 }),
    fc.constant('i'.repeat(128)),
    fc.constant('i'.repeat(129)),
    fc.constant(null),
    fc.boolean(),
    fc.constant({}),
    fc.constant([]),
  );
  const method = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...METHODS) },
    fc.constantFrom(...OTHER_METHODS),
    fc.string({ maxLength: 30 }),
    anything,
  );
  const request = method.chain((m) =>
    fc.record(
      {
        jsonrpc: fc.oneof({ weight: 8, arbitrary: fc.constant('2.0') }, fc.constantFrom('1.0', 2, '2', null), anything),
        id,
        method: fc.constant(m),
        params: params(m),
      },
      { requiredKeys: [] },
    ),
  );
  const messageText = fc.oneof(
    { weight: 10, arbitrary: request.map((r) => JSON.stringify(r) ?? 'null') },
    fc.array(request, { minLength: 1, maxLength: 5 }).map((rs) => JSON.stringify(rs)),
    fc.constantFrom(
      'null',
      '[]',
      '1',
      '"x"',
      '{',
      '',
      ' ',
      'true',
      '{}',
      '\ufeff{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}',
      '{"jsonrpc":"2.0","id":1,"method":"slotSubscribe","method":"signatureSubscribe"}',
      `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
      `{"jsonrpc":"2.0","id":"${'i'.repeat(10_000)}","method":"slotSubscribe"}`,
    ),
    fc.string({ unit: 'grapheme', maxLength: 200 }),
    fc.json({ maxDepth: 4 }),
  );
  const parts = fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, fc.integer({ min: 2, max: 12 }));

  /** Well-formed subscriptions, so that sockets hold some and the limits per connection, per key and in total are reached. */
  const subscribe = fc.oneof(
    fc
      .tuple(signature, fc.constantFrom('processed', 'confirmed', 'finalized'), fc.nat())
      .map(([s, c, i]) => ({ jsonrpc: '2.0', id: i, method: 'signatureSubscribe', params: [s, { commitment: c }] })),
    fc.nat().map((i) => ({ jsonrpc: '2.0', id: i, method: 'slotSubscribe' })),
  );
  const message = fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: messageText },
        subscribe.map((r) => JSON.stringify(r)),
      ),
      parts,
    )
    .map(([data, n]): FrameAction => ({ type: 'message', kind: n > 1 ? 'text in fragments' : 'text', data, binary: false, parts: n }));
  const binary = fc
    .tuple(
      fc.oneof(
        messageText.map((t) => Buffer.from(t)),
        fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      ),
      parts,
    )
    .map(([data, n]): FrameAction => ({ type: 'message', kind: 'binary', data, binary: true, parts: n }));
  const unsubscribeOwn = fc
    .tuple(fc.constantFrom('signatureUnsubscribe' as const, 'slotUnsubscribe' as const), fc.nat())
    .map(([m, i]): FrameAction => ({
      type: 'message',
      kind: `${m} of its own subscription`,
      data: JSON.stringify({ jsonrpc: '2.0', id: i, method: m }),
      binary: false,
      parts: 1,
      unsubscribeOwn: m,
    }));
  const control = fc.oneof(
    fc.uint8Array({ maxLength: 125 }).map((b): FrameAction => ({ type: 'ping', kind: 'ping', data: Buffer.from(b) })),
    fc.uint8Array({ maxLength: 125 }).map((b): FrameAction => ({ type: 'pong', kind: 'unasked pong', data: Buffer.from(b) })),
    fc
      .tuple(fc.constantFrom(1000, 1001, 1003, 1007, 1008, 1011, 3000, 4000, 4999), fc.string({ maxLength: 40 }))
      .map(([code, reason]): FrameAction => ({ type: 'close', kind: `close ${code}`, code, reason })),
  );

  const raw = (kind: string, frames: FrameSpec[], mayStall = false): FrameAction => ({
    type: 'raw',
    kind,
    frames: frames.map(encodeFrame),
    mayStall,
  });
  const rawFrames = fc.oneof(
    fc
      .tuple(fc.constantFrom(...INVALID_UTF8), fc.nat(50))
      .map(([bad, at]) =>
        raw('invalid UTF-8 text', [{ opcode: OPCODE.text, payload: Buffer.concat([Buffer.from(GET_SLOT_REQUEST.slice(0, at)), bad]) }]),
      ),
    fc.constantFrom(...INVALID_UTF8).map((bad) =>
      raw('invalid UTF-8 across fragments', [
        { opcode: OPCODE.text, payload: Buffer.from('"\u00e9'), fin: false },
        { opcode: OPCODE.continuation, payload: bad },
      ]),
    ),
    fc.constant(
      raw('a character split across fragments', [
        { opcode: OPCODE.text, payload: Buffer.from('"\u20ac"').subarray(0, 2), fin: false },
        { opcode: OPCODE.continuation, payload: Buffer.from('"\u20ac"').subarray(2) },
      ]),
    ),
    fc
      .integer({ min: 65_537, max: 200_000 })
      .map((n) => raw('text over 64 KiB', [{ opcode: OPCODE.text, payload: Buffer.alloc(n, 0x20) }])),
    fc
      .constantFrom(2n ** 63n, 2n ** 64n - 1n, 2n ** 53n, 65_537n, 1n << 40n)
      .map((n) => raw(`length field ${n}`, [{ opcode: OPCODE.text, payload: Buffer.from('{}'), length: n }])),
    fc.integer({ min: 20, max: 70 }).map((n) =>
      raw(
        'fragments summing over 64 KiB',
        Array.from({ length: n }, (_, i) => ({
          opcode: i === 0 ? OPCODE.text : OPCODE.continuation,
          payload: Buffer.alloc(4_000, 0x20),
          fin: i === n - 1,
        })),
      ),
    ),
    fc
      .constantFrom(OPCODE.text, OPCODE.binary, OPCODE.ping, OPCODE.close)
      .map((op) => raw('unmasked frame', [{ opcode: op, payload: Buffer.from(GET_SLOT_REQUEST), masked: false }])),
    fc
      .integer({ min: 1, max: 7 })
      .map((rsv) => raw(`RSV bits ${rsv}`, [{ opcode: OPCODE.text, payload: Buffer.from(GET_SLOT_REQUEST), rsv }])),
    fc
      .constantFrom(3, 4, 5, 6, 7, 11, 12, 13, 14, 15)
      .map((op) => raw(`reserved opcode ${op}`, [{ opcode: op, payload: Buffer.from('x') }])),
    fc
      .constantFrom(OPCODE.ping, OPCODE.pong, OPCODE.close)
      .map((op) => raw('control frame over 125 bytes', [{ opcode: op, payload: Buffer.alloc(126, 0x41) }])),
    fc
      .constantFrom(OPCODE.ping, OPCODE.pong, OPCODE.close)
      .map((op) => raw('fragmented control frame', [{ opcode: op, payload: Buffer.from('x'), fin: false }])),
    fc.constant(raw('continuation with nothing to continue', [{ opcode: OPCODE.continuation, payload: Buffer.from(GET_SLOT_REQUEST) }])),
    fc.constant(
      raw('a message begun inside another', [
        { opcode: OPCODE.text, payload: Buffer.from('{"jsonrpc":'), fin: false },
        { opcode: OPCODE.text, payload: Buffer.from(GET_SLOT_REQUEST) },
      ]),
    ),
    fc.uint8Array({ maxLength: 125 }).map((b) =>
      raw('a ping between fragments', [
        { opcode: OPCODE.text, payload: Buffer.from(GET_SLOT_REQUEST.slice(0, 10)), fin: false },
        { opcode: OPCODE.ping, payload: Buffer.from(b) },
        { opcode: OPCODE.continuation, payload: Buffer.from(GET_SLOT_REQUEST.slice(10)) },
      ]),
    ),
    fc.integer({ min: 2, max: GET_SLOT_REQUEST.length }).map((n) =>
      raw(
        'one byte a fragment',
        Array.from({ length: n }, (_, i) => ({
          opcode: i === 0 ? OPCODE.text : OPCODE.continuation,
          payload: Buffer.from(i === n - 1 ? GET_SLOT_REQUEST.slice(i) : GET_SLOT_REQUEST[i]!),
          fin: i === n - 1,
        })),
      ),
    ),
    fc.constant(raw('close with a 1-byte payload', [{ opcode: OPCODE.close, payload: Buffer.from([3]) }])),
    fc
      .constantFrom(0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535)
      .map((code) => raw(`close with code ${code}`, [{ opcode: OPCODE.close, payload: closePayload(code, Buffer.from('x')) }])),
    fc
      .constantFrom(...INVALID_UTF8)
      .map((bad) => raw('close with an invalid UTF-8 reason', [{ opcode: OPCODE.close, payload: closePayload(1000, bad) }])),
    fc
      .constantFrom(1000, 3000, 4999)
      .map((code) =>
        raw(`close ${code} with a 123-byte reason`, [{ opcode: OPCODE.close, payload: closePayload(code, Buffer.alloc(123, 0x61)) }]),
      ),
    fc
      .constantFrom(OPCODE.text, OPCODE.binary, OPCODE.ping, OPCODE.pong)
      .map((op) => raw('an empty frame', [{ opcode: op, payload: Buffer.alloc(0) }])),
    fc
      .constantFrom('16' as const, '64' as const)
      .map((form) =>
        raw(`a ${form}-bit length for a short payload`, [{ opcode: OPCODE.text, payload: Buffer.from(GET_SLOT_REQUEST), length: form }]),
      ),
    fc
      .uint8Array({ minLength: 1, maxLength: 200 })
      .map((b) => ({ type: 'raw' as const, kind: 'random bytes', frames: [Buffer.from(b)], mayStall: true })),
  );

  return fc.oneof(
    { weight: 12, arbitrary: message },
    { weight: 2, arbitrary: binary },
    { weight: 2, arbitrary: unsubscribeOwn },
    { weight: 2, arbitrary: control },
    { weight: 4, arbitrary: rawFrames },
  );
}

/** Frames an action puts on the wire (a message in parts is one frame a part). */
export function framesIn(action: FrameAction): number {
  if (action.type === 'message') return action.parts;
  if (action.type === 'raw') return action.frames.length;
  return 1;
}
