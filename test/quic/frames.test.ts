/**
 * Frames, transport parameters and the received-packet ranges: what the writers write the
 * parser reads back, RFC 9000's rules on each are enforced, and hostile bytes (fast-check,
 * fixed seed) only ever raise a QuicError with a transport error code.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AckTracker } from '../../src/quic/ack-tracker';
import { CryptoReceive } from '../../src/quic/crypto-streams';
import { ackLength, parseFrames, writeAck, writeConnectionClose, writeCrypto, writeStream } from '../../src/quic/frames';
import { decodeTransportParameters, encodeTransportParameters } from '../../src/quic/transport-parameters';
import { InvalidStream, ReceiveStreams } from '../../src/quic/receive-streams';
import { QuicError } from '../../src/quic/wire';

const hex = (text: string) => Buffer.from(text, 'hex');

describe('QUIC frames', () => {
  it('reads back what the writers wrote: ACK with gaps, CRYPTO, STREAM with offset and FIN, CONNECTION_CLOSE', () => {
    const buffer = Buffer.alloc(400);
    const ranges = [
      { smallest: 90, largest: 100 },
      { smallest: 50, largest: 80 },
      { smallest: 0, largest: 10 },
    ];
    let at = writeAck(buffer, 0, ranges, 7);
    assert.equal(at, ackLength(ranges, 7));
    at = writeCrypto(buffer, at, 300, Buffer.from('hello'));
    at = writeStream(buffer, at, 6, 1000, Buffer.from('tx bytes'), true);
    at = writeStream(buffer, at, 2, 0, Buffer.from('first'), false);
    at = writeConnectionClose(buffer, at, true, 5, 0, 'invalid stream');
    const frames = parseFrames(buffer.subarray(0, at));
    assert.deepEqual(frames, [
      { type: 'ack', ranges, delay: 7 },
      { type: 'crypto', offset: 300, data: Buffer.from('hello') },
      { type: 'stream', streamId: 6, offset: 1000, data: Buffer.from('tx bytes'), fin: true },
      { type: 'stream', streamId: 2, offset: 0, data: Buffer.from('first'), fin: false },
      { type: 'connection-close', application: true, code: 5, frameType: 0, reason: 'invalid stream' },
    ]);
  });

  it('parses the frames of RFC 9001 A.3: ACK of packet 0 and a CRYPTO frame of 90 bytes', () => {
    const frames = parseFrames(
      hex(
        '02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf73988cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c940d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00020304',
      ),
    );
    assert.deepEqual(frames[0], { type: 'ack', ranges: [{ smallest: 0, largest: 0 }], delay: 0 });
    assert.equal(frames[1]!.type, 'crypto');
    assert.equal((frames[1] as { data: Buffer }).data.length, 90);
  });

  it('refuses what RFC 9000 forbids, each with its error code', () => {
    const code = (payload: string) => {
      try {
        parseFrames(hex(payload));
      } catch (error) {
        assert.ok(error instanceof QuicError, String(error));
        return error.code;
      }
      return 'accepted';
    };
    assert.equal(code(''), 0x0a, 'an empty packet');
    assert.equal(code('1f'), 0x07, 'an unknown frame type');
    assert.equal(code('020a000014'), 0x07, 'an ACK range below 0');
    assert.equal(code('0800'), 'accepted', 'a STREAM frame without length takes the rest');
    assert.equal(code('0a0005ab'), 0x07, 'a STREAM length past the end');
    assert.equal(code('1800001500'), 0x07, 'a connection ID of 21 bytes');
    assert.equal(code('130fffffffffffffffff'.slice(0, 18)), 0x07, 'MAX_STREAMS above 2^60');
    assert.equal(code('0700'), 0x07, 'an empty NEW_TOKEN');
  });

  it('only ever throws QuicError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 200 }), (bytes) => {
        try {
          parseFrames(Buffer.from(bytes));
        } catch (error) {
          assert.ok(error instanceof QuicError, `${String(error)} on ${Buffer.from(bytes).toString('hex')}`);
        }
      }),
      { seed: 20_261_125, numRuns: 20_000 },
    );
  });
});

describe('QUIC transport parameters', () => {
  it('round-trips, fills in defaults, and ignores unknown (greased) parameters', () => {
    const encoded = encodeTransportParameters({
      initialMaxStreamsUni: 2048,
      initialMaxData: 1 << 20,
      maxIdleTimeout: 30_000,
      initialSourceConnectionId: hex('0102'),
    });
    const greased = Buffer.concat([encoded, hex('80ff00010300aabb'.slice(0, 12)), hex('')]);
    const decoded = decodeTransportParameters(Buffer.concat([encoded, hex('4a4a0100')]), true);
    assert.equal(decoded.initialMaxStreamsUni, 2048);
    assert.equal(decoded.initialMaxData, 1 << 20);
    assert.equal(decoded.maxIdleTimeout, 30_000);
    assert.equal(decoded.ackDelayExponent, 3);
    assert.equal(decoded.maxUdpPayloadSize, 65_527);
    assert.deepEqual(decoded.initialSourceConnectionId, hex('0102'));
    assert.ok(greased.length > encoded.length);
  });

  it('refuses duplicates, server-only parameters from a client, and values out of range', () => {
    const refused = (bytes: string, fromServer = true) =>
      assert.throws(
        () => decodeTransportParameters(hex(bytes), fromServer),
        (error: unknown) => error instanceof QuicError && error.code === 0x08,
      );
    refused('0901050901 05'.replace(/ /g, ''));
    refused('000100', false);
    refused('03024000');
    refused('0a0115');
    refused('0e0101');
  });

  it('only ever throws QuicError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), fc.boolean(), (bytes, fromServer) => {
        try {
          decodeTransportParameters(Buffer.from(bytes), fromServer);
        } catch (error) {
          assert.ok(error instanceof QuicError, String(error));
        }
      }),
      { seed: 7, numRuns: 10_000 },
    );
  });
});

describe('received packet numbers and CRYPTO reassembly', () => {
  it('keeps disjoint ranges, joins them as gaps fill, and recognises duplicates', () => {
    const acks = new AckTracker(false, 25);
    for (const pn of [0, 1, 2, 5, 6, 9, 4]) acks.received(pn, true, 0);
    assert.equal(acks.isDuplicate(5), true);
    assert.equal(acks.isDuplicate(3), false);
    assert.deepEqual(acks.take(0)!.ranges, [
      { smallest: 9, largest: 9 },
      { smallest: 4, largest: 6 },
      { smallest: 0, largest: 2 },
    ]);
    acks.received(3, true, 0);
    acks.received(7, true, 0);
    acks.received(8, true, 0);
    assert.deepEqual(acks.take(0)!.ranges, [{ smallest: 0, largest: 9 }]);
  });

  it('an ACK is due after two ack-eliciting packets, or max_ack_delay after one', () => {
    const acks = new AckTracker(false, 25);
    acks.received(0, true, 100);
    assert.equal(acks.deadline(), 125);
    acks.received(1, true, 110);
    assert.equal(acks.deadline(), 100);
    acks.take(110);
    acks.received(2, false, 120);
    assert.equal(acks.deadline(), Infinity);
  });

  it('puts CRYPTO data back in order, once, and refuses data too far ahead', () => {
    const crypto = new CryptoReceive();
    assert.equal(crypto.receive(5, Buffer.from('fghij')).length, 0);
    assert.equal(crypto.receive(0, Buffer.from('abc')).toString(), 'abc');
    assert.equal(crypto.receive(2, Buffer.from('cde')).toString(), 'defghij');
    assert.equal(crypto.receive(0, Buffer.from('abcdefghij')).length, 0);
    assert.throws(
      () => crypto.receive(1 << 20, Buffer.from('x')),
      (error: unknown) => error instanceof QuicError && error.code === 0x0d,
    );
  });
});

describe('incoming transaction streams (server side)', () => {
  it('assembles a stream sent in pieces, out of order and twice, and hands it on once', () => {
    const streams = new ReceiveStreams(1232, 4);
    const tx = Buffer.from('0123456789');
    assert.equal(streams.receive(2, 5, tx.subarray(5), true), null);
    assert.equal(streams.receive(2, 5, tx.subarray(5), true), null);
    assert.deepEqual(streams.receive(2, 0, tx.subarray(0, 6), false), tx);
    assert.equal(streams.receive(2, 0, tx, true), null);
  });

  it("refuses what Agave refuses: an over-long or empty stream (InvalidStream, code 5), a stream past the credit, the client's bidirectional streams", () => {
    const streams = new ReceiveStreams(1232, 2);
    assert.throws(() => streams.receive(2, 1200, Buffer.alloc(33), true), InvalidStream);
    assert.throws(() => streams.receive(6, 0, Buffer.alloc(0), true), InvalidStream);
    assert.throws(
      () => streams.receive(10, 0, Buffer.alloc(1), true),
      (error: unknown) => error instanceof QuicError && error.code === 0x04,
    );
    assert.throws(
      () => streams.receive(0, 0, Buffer.alloc(1), true),
      (error: unknown) => error instanceof QuicError && error.code === 0x04,
    );
  });

  it('renews credit as streams finish, half a window at a time', () => {
    const streams = new ReceiveStreams(1232, 4);
    assert.equal(streams.limit, 4);
    for (const id of [2, 6]) streams.receive(id, 0, Buffer.from('x'), true);
    assert.equal(streams.renew(), 6);
    assert.equal(streams.renew(), null);
  });
});
