/**
 * The QUIC fuzz against the connections' frame handling: a client and a server connection
 * (client-connection.ts, server-connection.ts) complete a handshake in memory, then each is
 * sent 1-RTT packets sealed with the right keys, so that they get past decryption, holding
 * random frames of every type RFC 9000 §19 defines (and unknown ones), their fields small,
 * at a boundary or huge, their lengths honest or not, sometimes mutated after encoding.
 */
import { QuicClientConnection } from '../../../src/quic/client-connection';
import type { QuicConnection } from '../../../src/quic/connection';
import { splitDatagram } from '../../../src/quic/packets';
import { QuicServerConnection } from '../../../src/quic/server-connection';
import { encodeVarint } from '../../../src/quic/wire';
import { sealShort } from '../../helpers/quic-hostile-peer';
import { mutate, type FuzzRandom } from './fuzz-random';
import { checkDeadline, checkEvents, clientOptionsFrom, FuzzFailure, guarded, identityFrom, serverTlsFrom } from './fuzz-world';

const MAX_VARINT = 2 ** 62 - 1;

function varint(random: FuzzRandom): Buffer {
  return encodeVarint(Math.min(MAX_VARINT, random.wideNumber()));
}

function small(random: FuzzRandom, below: number): Buffer {
  return encodeVarint(random.int(below));
}

/** A stream ID a client may use (2, 6, 10…), or one it may not, or any number. */
function streamId(random: FuzzRandom): Buffer {
  return encodeVarint(random.pick([2 + 4 * random.int(40), 0, 1, 3, 4 * random.int(10), Math.min(MAX_VARINT, random.wideNumber())]));
}

/** Data with a length field: honest most of the time. */
function lengthPrefixed(random: FuzzRandom, max: number): Buffer {
  const data = random.bytes(random.int(max));
  return Buffer.concat([random.chance(0.85) ? encodeVarint(data.length) : varint(random), data]);
}

const FRAME_BUILDERS: ((random: FuzzRandom) => Buffer)[] = [
  (random) => Buffer.alloc(1 + random.int(20)),
  () => Buffer.of(0x01),
  (random) => {
    const ecn = random.chance(0.2);
    const count = random.int(5);
    const parts = [Buffer.of(ecn ? 0x03 : 0x02), varint(random), varint(random), encodeVarint(count), small(random, 50)];
    for (let i = 0; i < count; i++) parts.push(small(random, 20), small(random, 20));
    if (ecn) parts.push(varint(random), varint(random), varint(random));
    return Buffer.concat(parts);
  },
  (random) => Buffer.concat([Buffer.of(0x04), streamId(random), varint(random), varint(random)]),
  (random) => Buffer.concat([Buffer.of(0x05), streamId(random), varint(random)]),
  (random) => Buffer.concat([Buffer.of(0x06), random.chance(0.5) ? small(random, 5_000) : varint(random), lengthPrefixed(random, 300)]),
  (random) => Buffer.concat([Buffer.of(0x07), lengthPrefixed(random, 100)]),
  (random) => {
    const type = 0x08 | random.int(8);
    const parts = [Buffer.of(type), streamId(random)];
    if (type & 0x04) parts.push(random.chance(0.5) ? small(random, 2_000) : varint(random));
    parts.push(type & 0x02 ? lengthPrefixed(random, 400) : random.bytes(random.int(400)));
    return Buffer.concat(parts);
  },
  (random) => Buffer.concat([Buffer.of(0x10), varint(random)]),
  (random) => Buffer.concat([Buffer.of(0x11), streamId(random), varint(random)]),
  (random) => Buffer.concat([Buffer.of(0x12 | random.int(2)), varint(random)]),
  (random) => Buffer.concat([Buffer.of(0x14), varint(random)]),
  (random) => Buffer.concat([Buffer.of(0x15), streamId(random), varint(random)]),
  (random) => Buffer.concat([Buffer.of(0x16 | random.int(2)), varint(random)]),
  (random) => {
    const length = random.chance(0.8) ? 8 : random.int(26);
    return Buffer.concat([
      Buffer.of(0x18),
      small(random, 12),
      small(random, 12),
      Buffer.of(length),
      random.bytes(length),
      random.bytes(16),
    ]);
  },
  (random) => Buffer.concat([Buffer.of(0x19), small(random, 12)]),
  (random) => Buffer.concat([Buffer.of(0x1a | random.int(2)), random.bytes(8)]),
  (random) => Buffer.concat([Buffer.of(0x1c), varint(random), varint(random), lengthPrefixed(random, 60)]),
  (random) => Buffer.concat([Buffer.of(0x1d), varint(random), lengthPrefixed(random, 60)]),
  () => Buffer.of(0x1e),
  (random) => Buffer.concat([encodeVarint(0x1f + random.int(2 ** 20)), random.bytes(random.int(30))]),
];

/** Frames a peer may well send, with fields in range: they keep a connection open, so that later frames meet deeper state. */
const PLAUSIBLE_BUILDERS: ((random: FuzzRandom) => Buffer)[] = [
  () => Buffer.of(0x01),
  (random) => Buffer.alloc(1 + random.int(20)),
  (random) => {
    const data = random.bytes(random.int(300));
    const fin = random.chance(0.5) ? 1 : 0;
    return Buffer.concat([
      Buffer.of(0x0e | fin),
      encodeVarint(2 + 4 * random.int(12)),
      small(random, 900),
      encodeVarint(data.length),
      data,
    ]);
  },
  (random) => Buffer.concat([Buffer.of(0x10), small(random, 2 ** 30)]),
  (random) => Buffer.concat([Buffer.of(0x11), encodeVarint(2 + 4 * random.int(12)), small(random, 2 ** 20)]),
  (random) => Buffer.concat([Buffer.of(0x13), small(random, 200)]),
  (random) => Buffer.concat([Buffer.of(0x1a), random.bytes(8)]),
  (random) => Buffer.concat([Buffer.of(0x15), encodeVarint(2 + 4 * random.int(12)), small(random, 2_000)]),
  (random) => Buffer.concat([Buffer.of(0x04), encodeVarint(2 + 4 * random.int(12)), small(random, 10), small(random, 1_200)]),
  (random) => Buffer.concat([Buffer.of(0x02), small(random, 8), small(random, 100), encodeVarint(0), small(random, 3)]),
];

/** One to four random frames, most of them plausible, sometimes mutated after encoding. */
export function randomFrames(random: FuzzRandom): Buffer {
  const parts: Buffer[] = [];
  for (let n = 1 + random.int(4); n > 0; n--) parts.push(random.pick(random.chance(0.7) ? PLAUSIBLE_BUILDERS : FRAME_BUILDERS)(random));
  const payload = Buffer.concat(parts);
  return random.chance(0.1) ? mutate(random, payload) : payload;
}

interface Side {
  readonly name: string;
  readonly connection: QuicConnection<unknown> & { readonly scid: Buffer };
}

/** A client and a server connection after their handshake, and how to move datagrams between them. */
function connectedPair(random: FuzzRandom, clock: { now: number }, track: (datagram: Buffer) => void): [Side, Side] {
  const client = new QuicClientConnection<number>({
    now: clock.now,
    ...clientOptionsFrom(random, identityFrom(random)),
    idleTimeoutMs: 3_000,
  });
  const first = client.poll(clock.now)!;
  const [initial] = splitDatagram(first, 8);
  if (initial === undefined || initial.type !== 'initial') throw new FuzzFailure('the client sent no Initial', first);
  const server = new QuicServerConnection({
    now: clock.now,
    clientDcid: Buffer.from(initial.dcid),
    clientScid: Buffer.from(initial.scid),
    originalDcid: Buffer.from(initial.dcid),
    scid: random.bytes(8),
    statelessResetToken: random.bytes(16),
    addressValidated: false,
    tls: serverTlsFrom(random, identityFrom(random)),
    maxStreamBytes: 1232,
    streamWindow: () => 8,
    idleTimeoutMs: 3_000,
  });
  const sides: [Side, Side] = [
    { name: 'client', connection: client },
    { name: 'server', connection: server },
  ];
  deliver(sides[1], first, clock, track);
  pump(sides, clock, track);
  return sides;
}

function deliver(to: Side, datagram: Buffer, clock: { now: number }, track: (datagram: Buffer) => void): void {
  track(datagram);
  guarded(`the ${to.name} connection's receive`, datagram, () => to.connection.receive(datagram, clock.now));
}

/** Datagrams both ways until neither side sends, events checked. */
function pump(sides: [Side, Side], clock: { now: number }, track: (datagram: Buffer) => void): void {
  for (let round = 0; round < 20; round++) {
    let moved = false;
    for (const [from, to] of [sides, [sides[1], sides[0]]] as [Side, Side][]) {
      for (
        let out = guarded(`the ${from.name} connection's poll`, undefined, () => from.connection.poll(clock.now));
        out !== null;
        out = from.connection.poll(clock.now)
      ) {
        moved = true;
        deliver(to, out, clock, track);
      }
      checkEvents(
        from.name,
        guarded(`the ${from.name} connection's takeEvents`, undefined, () => from.connection.takeEvents()),
      );
    }
    if (!moved) return;
  }
}

export function frameCase(random: FuzzRandom): number {
  const clock = { now: 1_000 };
  let last: Buffer | undefined;
  const track = (datagram: Buffer) => (last = datagram);
  let sides = connectedPair(random, clock, track);
  let pairs = 1;
  let inputs = 0;
  const packets = 20 + random.int(60);
  for (let i = 0; i < packets; i++) {
    if (sides[0].connection.isClosed && sides[1].connection.isClosed) {
      // A hostile frame ended both: a new pair, so that the case goes on.
      if (++pairs > 4) break;
      sides = connectedPair(random, clock, track);
    }
    const to = random.pick(sides);
    const from = to === sides[0] ? sides[1] : sides[0];
    const keys = from.connection.spaces.application.sendKeys;
    if (keys === null || to.connection.isClosed) continue;
    const phase = (from.connection as unknown as { keyPhases: { phase: 0 | 1 } }).keyPhases.phase;
    const packetNumber = from.connection.spaces.application.nextPacketNumber++;
    const payload = randomFrames(random);
    try {
      deliver(to, sealShort(keys, to.connection.scid, packetNumber, payload, phase), clock, track);
      inputs++;
      if (random.chance(0.5)) pump(sides, clock, track);
      if (random.chance(0.2)) {
        const [client, server] = sides;
        clock.now = Math.max(
          clock.now + 1,
          Math.min(
            checkDeadline('the client', client.connection.nextTimeout()),
            checkDeadline('the server', server.connection.nextTimeout()),
            clock.now + 300,
          ),
        );
        for (const side of sides) guarded(`the ${side.name} connection's onTimeout`, undefined, () => side.connection.onTimeout(clock.now));
      }
    } catch (error) {
      // The input is the packet as sealed; its frames in clear are what a reader wants.
      if (error instanceof FuzzFailure)
        throw new FuzzFailure(`${error.problem} (the last packet's frames, in clear: ${payload.toString('hex')})`, error.input ?? last);
      throw error;
    }
  }
  pump(sides, clock, track);
  return inputs;
}
