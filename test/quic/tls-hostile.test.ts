/**
 * Hostile bytes into both handshakes: every message cut short behind a header that matches,
 * random bytes, and valid flights with bytes flipped. Whatever comes in, the only exception
 * is a TlsAlert, and never internal_error (which is what a RangeError or any other bug
 * inside becomes). Random cases come from fast-check with a fixed seed, so a failure replays.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ALERT, TlsAlert, TlsClientHandshake, TlsServerHandshake, type EncryptionLevel, type TlsOutput } from '../../src/quic/tls';
import { HandshakeMessageBuffer, type HandshakeMessage } from '../../src/quic/tls/message-buffer';
import { encodeHandshake } from '../../src/quic/tls/messages';
import { ed25519Identity } from '../helpers/tls-identity';

const SEED = 20_261_125;
const RUNS = 300;
const LEVELS: EncryptionLevel[] = ['initial', 'handshake', 'application'];
const clientIdentity = ed25519Identity();
const serverIdentity = ed25519Identity();

const newClient = () =>
  new TlsClientHandshake({ identity: clientIdentity, alpn: 'solana-tpu', transportParameters: Buffer.from('0102', 'hex') });
const newServer = () =>
  new TlsServerHandshake({
    identity: serverIdentity,
    alpn: ['solana-tpu'],
    transportParameters: Buffer.from('0304', 'hex'),
    requireClientCertificate: true,
  });

const dataAt = (output: TlsOutput, level: EncryptionLevel) => output.send.find((send) => send.level === level)!.data;

function messagesOf(bytes: Buffer): HandshakeMessage[] {
  const buffer = new HandshakeMessageBuffer();
  buffer.push(bytes);
  const messages: HandshakeMessage[] = [];
  for (let message = buffer.next(); message; message = buffer.next()) messages.push(message);
  return messages;
}

/**
 * A fresh pair at each point where one side receives: the receiver, the level, and the
 * bytes it would receive there, whole.
 */
interface Point {
  readonly name: string;
  /** A fresh receiver in the state just before these bytes, and the bytes. */
  fresh(): { receive(level: EncryptionLevel, data: Buffer): TlsOutput; level: EncryptionLevel; data: Buffer };
}

const POINTS: Point[] = [
  {
    name: 'ClientHello into the server',
    fresh: () => {
      const server = newServer();
      return { receive: (level, data) => server.receive(level, data), level: 'initial', data: dataAt(newClient().start(), 'initial') };
    },
  },
  {
    name: 'ServerHello into the client',
    fresh: () => {
      const client = newClient();
      const output = newServer().receive('initial', dataAt(client.start(), 'initial'));
      return { receive: (level, data) => client.receive(level, data), level: 'initial', data: dataAt(output, 'initial') };
    },
  },
  {
    name: "the server's flight into the client",
    fresh: () => {
      const client = newClient();
      const output = newServer().receive('initial', dataAt(client.start(), 'initial'));
      client.receive('initial', dataAt(output, 'initial'));
      return { receive: (level, data) => client.receive(level, data), level: 'handshake', data: dataAt(output, 'handshake') };
    },
  },
  {
    name: "the client's flight into the server",
    fresh: () => {
      const client = newClient();
      const server = newServer();
      const output = server.receive('initial', dataAt(client.start(), 'initial'));
      client.receive('initial', dataAt(output, 'initial'));
      const flight = dataAt(client.receive('handshake', dataAt(output, 'handshake')), 'handshake');
      return { receive: (level, data) => server.receive(level, data), level: 'handshake', data: flight };
    },
  },
];

/** Runs `feed`; returns its output, or null if it threw a TlsAlert other than internal_error. Anything else fails the test. */
function alertOrOutput(feed: () => TlsOutput): TlsOutput | null {
  try {
    return feed();
  } catch (error) {
    assert.ok(error instanceof TlsAlert, `only TlsAlert may escape, not ${error instanceof Error ? error.stack : String(error)}`);
    assert.notEqual(error.alert, ALERT.internalError, error.message);
    return null;
  }
}

describe('TLS 1.3 handshake, hostile input', () => {
  it('every message cut short, behind a header that says so, is an alert', () => {
    let cases = 0;
    for (const point of POINTS) {
      const messages = messagesOf(point.fresh().data);
      for (const [index, message] of messages.entries()) {
        for (let length = 0; length < message.body.length; length++) {
          // The messages before this one come from the same fresh pair: its own bytes, cut the same way.
          const fresh = point.fresh();
          const own = messagesOf(fresh.data);
          const cut = encodeHandshake(message.type, own[index]!.body.subarray(0, length));
          const data = Buffer.concat([...own.slice(0, index).map((each) => each.raw), cut]);
          const where = `${point.name}: message ${index} (type ${message.type}) cut to ${length} bytes`;
          assert.equal(
            alertOrOutput(() => fresh.receive(fresh.level, data)),
            null,
            where,
          );
          cases++;
        }
      }
    }
    assert.ok(cases > 800, `${cases} cases`);
  });

  it('a message longer than any real one is refused at its header (50), not buffered', () => {
    for (const point of POINTS) {
      const fresh = point.fresh();
      assert.throws(
        () => fresh.receive(fresh.level, Buffer.from([fresh.data[0]!, 0xff, 0xff, 0xff])),
        (error) => error instanceof TlsAlert && error.alert === ALERT.decodeError,
        point.name,
      );
    }
  });

  it('random bytes at any level, to any receiver, give an alert or nothing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...POINTS),
        fc.constantFrom(...LEVELS),
        fc.uint8Array({ minLength: 1, maxLength: 600 }),
        fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }),
        (point, level, bytes, type) => {
          const fresh = point.fresh();
          // Half the cases look like a message of a real type with a length that fits, so that decoders see them.
          const data = type === undefined ? Buffer.from(bytes) : encodeHandshake(type % 2 === 0 ? fresh.data[0]! : type, bytes);
          const output = alertOrOutput(() => fresh.receive(level, data));
          assert.equal(output?.complete, undefined);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('valid flights with bytes flipped, cut or added give an alert or an incomplete handshake, never a completed one', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...POINTS),
        fc.array(fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }), { minLength: 1, maxLength: 4 }),
        fc.constantFrom('flip', 'truncate', 'append'),
        fc.uint8Array({ maxLength: 40 }),
        (point, flips, shape, extra) => {
          const fresh = point.fresh();
          let data = Buffer.from(fresh.data);
          for (const { at, xor } of flips) data[at % data.length]! ^= xor;
          if (shape === 'truncate') data = data.subarray(0, flips[0]!.at % data.length);
          if (shape === 'append') data = Buffer.concat([data, extra]);
          const output = alertOrOutput(() => fresh.receive(fresh.level, data));
          // A changed hello may still lead somewhere (its random is not checked until Finished); a changed flight never completes.
          if (point.name.includes('flight')) assert.equal(output?.complete, undefined);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('a valid exchange cut into random pieces completes, with the same secrets on both sides', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 20 }), (sizes) => {
        const pieces = (data: Buffer) => {
          const parts: Buffer[] = [];
          for (let offset = 0; offset < data.length;) {
            const size = sizes[parts.length % sizes.length]!;
            parts.push(data.subarray(offset, offset + size));
            offset += size;
          }
          return parts;
        };
        const client = newClient();
        const server = newServer();
        const feed = (to: { receive(level: EncryptionLevel, data: Buffer): TlsOutput }, output: TlsOutput) =>
          output.send.flatMap(({ level, data }) => pieces(data).map((piece) => to.receive(level, piece)));
        const serverFirst = feed(server, client.start());
        const clientOutputs = feed(client, { secrets: [], send: serverFirst.flatMap((each) => each.send) });
        const serverLast = feed(server, { secrets: [], send: clientOutputs.flatMap((each) => each.send) });
        assert.deepEqual(
          clientOutputs.flatMap((each) => each.secrets),
          serverFirst.flatMap((each) => each.secrets),
        );
        assert.ok(clientOutputs.some((each) => each.complete));
        assert.deepEqual(serverLast.find((each) => each.complete)?.complete?.peerIdentity, clientIdentity.publicKey);
      }),
      { seed: SEED, numRuns: 50 },
    );
  });
});
